package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/airlock-dev/airlock"
	"github.com/airlock-dev/airlock/postgres"
	"github.com/airlock-dev/airlock/sqlite"
)

// openStore opens the configured store: the embedded SQLite file, or a
// PostgreSQL database that several replicas may share. It also returns
// the SQLite store itself when that is the driver (nil otherwise), and
// how to close the store.
func openStore(ctx context.Context, cfg *Config, logger *slog.Logger) (airlock.Store, *sqlite.DB, func() error, error) {
	switch cfg.Store.Driver {
	case "sqlite":
		db := sqlite.NewDB(cfg.Store.Path)
		db.Logger = logger.With("component", "sqlite")
		if err := db.Open(ctx); err != nil {
			return nil, nil, nil, fmt.Errorf("open %s: %w", db.Path, err)
		}
		return db, db, db.Close, nil
	case "postgres":
		db := postgres.NewDB(cfg.Store.DSN.Reveal())
		db.Schema = cfg.Store.Schema
		db.Logger = logger.With("component", "postgres")
		if err := db.Open(ctx); err != nil {
			return nil, nil, nil, fmt.Errorf("open the PostgreSQL store: %w", err)
		}
		return db, nil, db.Close, nil
	}
	return nil, nil, nil, fmt.Errorf("store driver %q is not supported", cfg.Store.Driver)
}

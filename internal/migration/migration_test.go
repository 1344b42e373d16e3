package migration_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/airlock-dev/airlock/internal/migration"
)

func TestLoad(t *testing.T) {
	ms, err := migration.Load(fstest.MapFS{
		"m/0010_later.sql": {Data: []byte("B")},
		"m/0002_init.sql":  {Data: []byte("A")},
		"m/README":         {Data: []byte("not a migration")},
	}, "m")
	if err != nil || len(ms) != 2 || ms[0].Name != "0002_init" || ms[0].SQL != "A" || ms[1].Version != 10 || migration.Latest(ms) != 10 {
		t.Fatalf("%+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"must start with its number": {"m/init.sql": {}},
		"have the same number":       {"m/0001_a.sql": {}, "m/0001_b.sql": {}},
	} {
		if _, err := migration.Load(fsys, "m"); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: %v", fsys, err)
		}
	}
	if migration.Latest(nil) != 0 {
		t.Error("Latest of none")
	}
}

// Package pgtest gives tests a PostgreSQL database to run against: the
// machine's (AIRLOCK_TEST_POSTGRES), a fresh schema per test.
package pgtest

import (
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// defaultDSN is the PostgreSQL every machine of this project runs.
const defaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns the database the tests use (AIRLOCK_TEST_POSTGRES), and
// skips the test when it cannot be reached — or fails it under CI=true,
// where a missing database must never pass as a skip.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv("AIRLOCK_TEST_POSTGRES")
	if dsn == "" {
		dsn = defaultDSN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PostgreSQL unreachable (set AIRLOCK_TEST_POSTGRES): %v", err)
		}
		tb.Skipf("PostgreSQL unreachable (set AIRLOCK_TEST_POSTGRES): %v", err)
	}
	return dsn
}

// NewSchema returns the name of a fresh schema for one test, dropped when
// the test ends (after the stores on it are closed).
func NewSchema(tb testing.TB) (dsn, schema string) {
	tb.Helper()
	dsn = DSN(tb)
	schema = "airlock_test_" + strings.ToLower(rand.Text()[:12])
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return dsn, schema
}

// Proxy forwards TCP connections to the database, and can cut them all
// and refuse new ones: the database as a replica sees it when the network
// fails or PostgreSQL stops.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool
	stalled bool // bytes are held, not forwarded: a network partition
	resumed *sync.Cond
	conns   []net.Conn
}

// NewProxy starts a proxy to dsn's server and returns it with a DSN that
// goes through it.
func NewProxy(t testing.TB, dsn string) (*Proxy, string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	p.resumed = sync.NewCond(&p.mu)
	t.Cleanup(func() { ln.Close(); p.Cut(); p.Restore() })
	go p.serve()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if u, err := url.Parse(dsn); err == nil && strings.HasPrefix(dsn, "postgres") {
		u.Host = net.JoinHostPort(host, port)
		return p, u.String()
	}
	return p, dsn + " host=" + host + " port=" + port
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { p.pipe(s, c); s.Close() }()
		go func() { p.pipe(c, s); c.Close() }()
	}
}

// pipe copies from src to dst, holding what it reads while stalled.
func (p *Proxy) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		for p.stalled {
			p.resumed.Wait()
		}
		p.mu.Unlock()
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall holds every byte in flight until restore: the connections stay
// open, and nothing answers.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
}

// Cut closes every connection and refuses new ones until restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore lets bytes and connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.stalled = false, false
	p.resumed.Broadcast()
}

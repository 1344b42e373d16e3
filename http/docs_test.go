package http_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestServerDocRoutes: the route table of docs/SERVER.md lists every
// operation of the OpenAPI document the server serves, and every route the
// server mounts outside it (server.go's root.Handle), and nothing else.
// A route added to the code fails here until the table has its row.
func TestServerDocRoutes(t *testing.T) {
	documented := docRoutes(t, "../docs/SERVER.md")

	ts := newTestServer(t)
	resp := ts.do(t, "GET", "/openapi.json", "", "", nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d", resp.Status)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Summary string `json:"summary"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // route → what to write in its row
	for path, ops := range doc.Paths {
		for method, op := range ops {
			want[strings.ToUpper(method)+" "+path] = strings.ToLower(op.Summary[:1]) + op.Summary[1:]
		}
	}
	for _, r := range rootRoutes(t) {
		if _, ok := want[r]; !ok {
			want[r] = "(served outside the OpenAPI document)"
		}
	}

	for _, r := range slices.Sorted(maps.Keys(want)) {
		if !slices.Contains(documented, r) {
			t.Errorf("docs/SERVER.md's route table has no %s; add a row:\n| `%s` | ROLES | %s |", r, r, want[r])
		}
	}
	for _, r := range documented {
		if _, ok := want[r]; !ok {
			t.Errorf("docs/SERVER.md's route table lists %s, which the server does not serve", r)
		}
	}
}

// docRoutes reads the routes of the route table in a Markdown file: the
// table whose header starts "| route |". A cell lists one or more
// `METHOD /path` in backquotes, a query string is left out, and a path
// without a method takes the method before it (`GET /healthz`, `/readyz`).
func docRoutes(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	in := false
	code := regexp.MustCompile("`([^`]*)`")
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| route |"):
			in = true
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), " | ")
		method := ""
		for _, m := range code.FindAllStringSubmatch(cell, -1) {
			r, _, _ := strings.Cut(m[1], "?")
			if m, p, ok := strings.Cut(r, " "); ok {
				method, r = m, p
			}
			if method == "" || !strings.HasPrefix(r, "/") {
				t.Errorf("%s: %q in the route table is not METHOD /path", file, m[1])
				continue
			}
			routes = append(routes, method+" "+r)
		}
	}
	if len(routes) == 0 {
		t.Fatalf("%s has no route table (a table whose header starts \"| route |\")", file)
	}
	return routes
}

// rootRoutes reads the routes build() mounts outside the API's mux, from
// server.go's source: each root.Handle with a method.
func rootRoutes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`root\.Handle\("([A-Z]+ /[^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatal(`server.go mounts no root.Handle("METHOD /path") routes, or they moved: teach rootRoutes where they are`)
	}
	return out
}

package airlock_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// modulePackages returns the directories of this module that hold a Go
// package (a non-test .go file), relative to the root ("." for the root),
// leaving out testdata, hidden directories and nested modules (bench/).
func modulePackages(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "go.mod")); p != "." && err == nil {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(p, "*.go"))
		if slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			dirs = append(dirs, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 2 {
		t.Fatalf("found the packages %v only", dirs)
	}
	return dirs
}

// TestPackageDocs: every package says what it is for, in a comment
// "// Package x …" (or "// Command x …" for a program) on its package
// clause, in one file only.
func TestPackageDocs(t *testing.T) {
	for _, dir := range modulePackages(t) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		var name string
		var docs []string
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			name = f.Name.Name
			if f.Doc == nil {
				continue
			}
			want := "Package " + name + " "
			if name == "main" {
				want = "Command " + path.Base(dir) + " "
			}
			if !strings.HasPrefix(f.Doc.Text(), want) {
				t.Errorf("%s: the package doc does not start %q", file, want)
			}
			docs = append(docs, file)
		}
		switch len(docs) {
		case 0:
			t.Errorf("%s: package %s has no doc comment saying what it is for (add a doc.go)", dir, name)
		case 1:
		default:
			t.Errorf("%s: package %s is documented in several files: %v", dir, name, docs)
		}
	}
}

// TestArchitectureNamesEveryPackage: docs/ARCHITECTURE.md's package table
// has a row for every package of the module, and names none that is gone.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	src, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	in := false
	code := regexp.MustCompile("`([^`]*)`")
	for line := range strings.Lines(string(src)) {
		switch {
		case strings.HasPrefix(line, "| package |"):
			in = true
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), " | ")
		for _, m := range code.FindAllStringSubmatch(cell, -1) {
			named = append(named, m[1])
		}
	}
	if len(named) == 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no package table (a table whose header starts "| package |")`)
	}
	pkgs := modulePackages(t)
	for _, dir := range pkgs {
		name := dir
		if dir == "." {
			name = "airlock"
		}
		if !slices.Contains(named, name) {
			t.Errorf("docs/ARCHITECTURE.md's package table has no row for %s", name)
		}
	}
	for _, name := range named {
		if name != "airlock" && !slices.Contains(pkgs, name) {
			t.Errorf("docs/ARCHITECTURE.md's package table names %s, which is not a package of the module", name)
		}
	}
}

// TestBenchmarksSummary: docs/BENCHMARKS.md's summary has a row for every
// issue the notebook below it has a section of, and each row's link leads
// to a heading of the notebook.
func TestBenchmarksSummary(t *testing.T) {
	src, err := os.ReadFile("docs/BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	summary, notebook, ok := strings.Cut(string(src), "\n## The notebook\n")
	if !ok {
		t.Fatal(`docs/BENCHMARKS.md has no "## The notebook" after its summary`)
	}
	slugs := map[string]bool{}
	issues := map[string]bool{}
	for line := range strings.Lines(notebook) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slugs[headingSlug(heading)] = true
		for _, m := range regexp.MustCompile(`\(issue (\d+)`).FindAllStringSubmatch(heading, -1) {
			issues[m[1]] = true
		}
	}
	rows := regexp.MustCompile(`(?m)^\| \[(\d+)\]\(#([^)]*)\) \|`).FindAllStringSubmatch(summary, -1)
	summarised := map[string]bool{}
	for _, r := range rows {
		summarised[r[1]] = true
		if !slugs[r[2]] {
			t.Errorf("docs/BENCHMARKS.md's summary links issue %s to #%s, which is no heading of the notebook", r[1], r[2])
		}
	}
	for issue := range issues {
		if !summarised[issue] {
			t.Errorf("docs/BENCHMARKS.md's notebook has a section of issue %s and its summary no row for it", issue)
		}
	}
}

// headingSlug is the anchor GitHub gives a Markdown heading: lower case,
// punctuation dropped, spaces as hyphens.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestNoCitationOfAMissingDesign: the code and the docs cite pages that are
// in the tree; the specification they once cited by section is not.
func TestNoCitationOfAMissingDesign(t *testing.T) {
	cite := regexp.MustCompile(`DESIGN(\.md| §)`)
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" && p != "testdata" || strings.HasPrefix(n, ".") && p != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := path.Ext(p); ext != ".go" && ext != ".md" && ext != ".txtar" || strings.HasSuffix(p, "docs_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if cite.MatchString(line) {
				t.Errorf("%s:%d cites a DESIGN page that is not in the tree: %s", p, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

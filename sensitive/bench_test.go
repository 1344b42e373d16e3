package sensitive

import "testing"

// benchPaths are the paths a shell command typically names: project files,
// a few absolute ones, a glob.
var benchPaths = []struct {
	p    string
	glob bool
}{
	{"/home/dev/app/internal/server/handler.go", false},
	{"/home/dev/app/README.md", false},
	{"/tmp/out.txt", false},
	{"/usr/local/bin/go", false},
	{"~/.ssh/id_ed25519", false},
	{"/home/dev/app/*.md", true},
}

// BenchmarkSecret is the cost of asking, for each path a command names,
// whether reading it reads a secret.
func BenchmarkSecret(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range benchPaths {
			Secret(p.p, p.glob)
		}
	}
}

// BenchmarkSystemPlace is the same for writing.
func BenchmarkSystemPlace(b *testing.B) {
	Builtin() // compile the catalogue outside the loop
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range benchPaths {
			SystemPlace(p.p, p.glob)
		}
	}
}

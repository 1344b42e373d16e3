package shell

import "testing"

func TestAnsibleFreeForm(t *testing.T) {
	for in, want := range map[string]string{
		"rm -rf x":                    "rm -rf x",
		"chdir=/tmp creates=x rm -rf": "rm -rf",
		"echo a=b":                    "echo a=b",
		"chdir rm":                    "chdir rm",
	} {
		if got := ansibleFreeForm(in); got != want {
			t.Errorf("ansibleFreeForm(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCloudEffectWords(t *testing.T) {
	for _, tc := range []struct {
		cli   string
		words []string
		want  string
	}{
		{"heroku", []string{"config:get", "X"}, "credentials.read"},
		{"heroku", []string{"run", "bash"}, "infra.change"},
		{"gcloud", []string{"compute", "ssh", "vm"}, "infra.change"},
		{"fly", []string{"auth", "token"}, "credentials.read"},
		{"aws", []string{"kms", "generate-data-key"}, "credentials.read"},
		{"gcloud", []string{"compute", "instances", "list"}, "infra.read"},
		{"gcloud", []string{"run", "deploy"}, "spend"},
	} {
		if got := string(cloudEffect(tc.cli, tc.words).class); got != tc.want {
			t.Errorf("cloudEffect(%s %q) = %s, want %s", tc.cli, tc.words, got, tc.want)
		}
	}
}

package shell

import "strings"

// Variables whose setting changes what later commands run.

// sensitiveVars lists the variables whose value changes what later commands
// run or how; setting one is privileged.
var sensitiveVars = map[string]string{
	"PATH":                             "changes which programs later commands run",
	"LD_PRELOAD":                       "loads a library into every program",
	"LD_LIBRARY_PATH":                  "changes which libraries programs load",
	"LD_AUDIT":                         "loads a library into every program",
	"GLIBC_TUNABLES":                   "changes how every program starts",
	"BASH_ENV":                         "runs a file when a shell starts",
	"ENV":                              "runs a file when a shell starts",
	"PROMPT_COMMAND":                   "runs a command at every prompt",
	"IFS":                              "changes how the shell splits words",
	"SHELLOPTS":                        "changes the options of child shells",
	"BASHOPTS":                         "changes the options of child shells",
	"PS4":                              "runs substitutions when the shell traces",
	"CDPATH":                           "changes where cd goes",
	"HOME":                             "changes the home directory that ~ and programs rely on",
	"GIT_SSH":                          "changes the program git runs to connect",
	"GIT_SSH_COMMAND":                  "changes the command git runs to connect",
	"GIT_EXEC_PATH":                    "changes the programs git runs",
	"GIT_PROXY_COMMAND":                "changes the command git runs to connect",
	"GIT_ASKPASS":                      "changes the program git runs for passwords",
	"SSH_ASKPASS":                      "changes the program ssh runs for passwords",
	"GIT_EXTERNAL_DIFF":                "changes the program git runs for diffs",
	"GIT_CONFIG_PARAMETERS":            "changes git configuration, which can run commands",
	"GIT_CONFIG_COUNT":                 "changes git configuration, which can run commands",
	"GIT_CONFIG":                       "changes git configuration, which can run commands",
	"GIT_CONFIG_GLOBAL":                "changes git configuration, which can run commands",
	"GIT_CONFIG_SYSTEM":                "changes git configuration, which can run commands",
	"GIT_DIR":                          "changes the repository, whose configuration can run commands",
	"GIT_TEMPLATE_DIR":                 "changes the hooks git installs",
	"PYTHONPATH":                       "changes the code Python loads",
	"PYTHONSTARTUP":                    "runs a file when Python starts",
	"PYTHONHOME":                       "changes the code Python loads",
	"NODE_OPTIONS":                     "changes the code Node.js loads",
	"NODE_PATH":                        "changes the code Node.js loads",
	"PERL5OPT":                         "changes the code Perl loads",
	"PERL5LIB":                         "changes the code Perl loads",
	"PERLLIB":                          "changes the code Perl loads",
	"RUBYOPT":                          "changes the code Ruby loads",
	"RUBYLIB":                          "changes the code Ruby loads",
	"JAVA_TOOL_OPTIONS":                "changes the code Java loads",
	"MANOPT":                           "changes the options of man, which name the programs it runs",
	"LESSOPEN":                         "makes less run a command on every file it shows, and show what the command names",
	"LESSCLOSE":                        "makes less run a command on every file it shows",
	"LESSKEY":                          "changes less's key bindings, which can run commands",
	"LESSKEYIN":                        "changes less's key bindings, which can run commands",
	"LESSSECURE":                       "changes whether less may run commands",
	"OPENSSL_CONF":                     "changes openssl's configuration, which loads engines and providers",
	"OPENSSL_ENGINES":                  "changes the libraries openssl loads",
	"OPENSSL_MODULES":                  "changes the libraries openssl loads",
	"APT_CONFIG":                       "changes apt's configuration, which can run commands",
	"WGETRC":                           "changes wget's configuration, which can run commands and write files",
	"CURL_HOME":                        "changes where curl reads its configuration",
	"PSQLRC":                           "changes the commands psql runs at start",
	"MAILRC":                           "changes the commands mail runs at start",
	"BUNDLE_GEMFILE":                   "changes the Gemfile bundler evaluates",
	"COMPOSER":                         "changes the composer.json composer evaluates",
	"PIP_CONFIG_FILE":                  "changes pip's configuration, which names the programs it runs",
	"MYSQL_HISTFILE":                   "changes the file mysql writes its history to",
	"PSQL_HISTORY":                     "changes the file psql writes its history to",
	"SQLITE_HISTORY":                   "changes the file sqlite3 writes its history to",
	"HISTFILE":                         "changes the file the shell writes its history to",
	"YARN_YARN_PATH":                   "changes the program yarn runs",
	"GOFLAGS":                          "changes the flags of every go command, which can name programs it runs",
	"GOTOOLCHAIN":                      "changes the Go toolchain go downloads and runs",
	"GOPROXY":                          "changes where go downloads code from",
	"GOENV":                            "changes go's configuration",
	"RUSTC_WRAPPER":                    "changes the program cargo runs to compile",
	"RUSTC":                            "changes the compiler cargo runs",
	"RUSTFLAGS":                        "changes rustc's flags, which can name programs it runs",
	"RUSTUP_TOOLCHAIN":                 "changes the toolchain rustup runs",
	"KUBECONFIG":                       "changes kubectl's configuration, whose plugins run commands and which holds credentials",
	"HELM_PLUGINS":                     "changes the plugins helm runs",
	"DOCKER_HOST":                      "changes the daemon docker talks to",
	"DOCKER_CONFIG":                    "changes docker's configuration, which names plugins and credential helpers",
	"TF_CLI_CONFIG_FILE":               "changes terraform's configuration, which names providers it runs",
	"AWS_CONFIG_FILE":                  "changes aws's configuration, which names commands it runs",
	"PYTHONINSPECT":                    "makes Python read commands from its input after a script",
	"MAKEFLAGS":                        "changes make's options, which can name programs it runs",
	"GNUMAKEFLAGS":                     "changes make's options, which can name programs it runs",
	"LESS":                             "changes less's options, which can run commands",
	"LESSKEY_CONTENT":                  "changes less's key bindings, which can run commands",
	"LESSHISTFILE":                     "changes the file less writes its history to",
	"LESSEDIT":                         "changes the editor command less runs",
	"VIMINIT":                          "runs vim commands when vim starts",
	"EXINIT":                           "runs ex commands when vi starts",
	"GCONV_PATH":                       "changes the libraries programs load to convert text",
	"SSH_SK_PROVIDER":                  "changes the library ssh loads for security keys",
	"AWKPATH":                          "changes the awk files awk includes",
	"AWKLIBPATH":                       "changes the libraries awk loads",
	"TAR_OPTIONS":                      "changes tar's options, which can run commands",
	"ZIPOPT":                           "changes zip's options, which can run commands",
	"UNZIP":                            "changes unzip's options",
	"RIPGREP_CONFIG_PATH":              "changes rg's options, which can run commands",
	"BAT_CONFIG_PATH":                  "changes bat's options, which name its pager",
	"ACK_OPTIONS":                      "changes ack's options, which can run commands",
	"MLRRC":                            "changes mlr's options, which can run commands",
	"MANROFFOPT":                       "changes the options man passes to its formatter",
	"XDG_CONFIG_HOME":                  "changes where programs read their configuration, which can run commands",
	"EMACSLOADPATH":                    "changes the code emacs loads",
	"PASSWORD_STORE_ENABLE_EXTENSIONS": "lets pass run extension scripts",
	"PASSWORD_STORE_EXTENSIONS_DIR":    "changes the extension scripts pass runs",
	"_JAVA_OPTIONS":                    "changes the code Java loads",
}

// sensitiveVar returns why setting name matters, if it does.
func sensitiveVar(name string) (string, bool) {
	if r, ok := sensitiveVars[name]; ok {
		return "sets " + name + ", which " + r, true
	}
	switch {
	case strings.HasPrefix(name, "DYLD_"):
		return "sets " + name + ", which changes the libraries programs load", true
	case strings.HasPrefix(name, "BASH_FUNC_"):
		return "sets " + name + ", which replaces a command in child shells", true
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_"), strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		return "sets " + name + ", which changes git configuration", true
	case strings.HasPrefix(name, "GIT_TRACE"):
		return "sets " + name + ", which makes git write a trace file", true
	case strings.HasPrefix(name, "TF_CLI_ARGS"):
		return "sets " + name + ", which adds arguments to terraform commands", true
	case strings.HasPrefix(name, "CARGO_TARGET_") && (strings.HasSuffix(name, "_RUNNER") || strings.HasSuffix(name, "_LINKER")):
		return "sets " + name + ", which changes the program cargo runs", true
	}
	return "", false
}

// commandVar reports whether name holds a command that programs run
// (git runs $GIT_PAGER); its value is analysed as a command.
func commandVar(name string) bool {
	switch name {
	case "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "PSQL_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
		"GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "SYSTEMD_EDITOR", "BROWSER", "RSYNC_RSH", "RSYNC_CONNECT_PROG",
		"DPKG_PAGER", "SENSIBLE_PAGER", "SENSIBLE_EDITOR", "GEM_EDITOR", "BUNDLER_EDITOR", "PSQL_EDITOR",
		"npm_config_script_shell", "npm_config_shell", "NPM_CONFIG_SCRIPT_SHELL", "NPM_CONFIG_SHELL",
		"AWS_PAGER", "GH_PAGER", "GH_BROWSER", "KUBE_EDITOR", "KUBECTL_EXTERNAL_DIFF", "BAT_PAGER", "ACK_PAGER",
		"INFO_PRINT_COMMAND", "NULLCMD", "READNULLCMD", "FCEDIT", "SUDO_ASKPASS":
		return true
	}
	return false
}

// commandScript is the shell command a command variable's value runs:
// BROWSER is a list of commands separated by colons, each given the URL for
// %s.
func commandScript(name, value string) string {
	if name != "BROWSER" {
		return value
	}
	return strings.ReplaceAll(strings.ReplaceAll(value, ":", "; "), "%s", `"$URL"`)
}

package shell

import (
	"slices"
	"strings"
	"sync"

	"github.com/airlock-dev/airlock"
)

// Infrastructure and cloud: Kubernetes, Helm, Terraform, Pulumi, Ansible,
// containers and the cloud CLIs. They talk to the network, so the secrets
// their words name are judged here (raiseSent): what they read they send
// or print.

var infraCommands = sync.OnceValue(func() map[string]rule {
	return map[string]rule{
		"kubectl": kubectl, "oc": kubectl,
		"helm": helm, "terraform": terraform, "tofu": terraform, "terragrunt": terraform,
		"docker": docker, "podman": docker, "nerdctl": docker,
		"docker-compose": compose, "podman-compose": compose,
		"aws": aws, "gcloud": cloud("gcloud"), "az": cloud("az"), "gsutil": cloud("gsutil"),
		"doctl": cloud("doctl"), "hcloud": cloud("hcloud"), "linode-cli": cloud("linode-cli"), "oci": cloud("oci"),
		"eksctl": cloud("eksctl"), "flyctl": cloud("flyctl"), "fly": cloud("fly"), "heroku": cloud("heroku"),
		"vercel": cloud("vercel"), "netlify": cloud("netlify"), "wrangler": cloud("wrangler"),
		"firebase": cloud("firebase"), "serverless": cloud("serverless"), "sls": cloud("sls"),
		"pulumi": pulumi, "ansible-playbook": ansible, "ansible": ansible,
		"packer": sent(use(infraChange(airlock.TierSpend, "builds machine images")).on(
			on("validate inspect version init", infraRead("checks templates")),
			onRule("console", console("HCL")),
			onRule("fmt", writes(airlock.ClassFSWrite, "formats templates")),
			on("plugins", install(airlock.TierNetworkEgress, "installs plugins")),
		)),
		// Every vagrant command runs the Vagrantfile, which is Ruby.
		"vagrant": sent(use(infraChange(airlock.TierWrite, "manages virtual machines, running the Vagrantfile")).with(
			getopt{}).withNone(read("shows vagrant help")).on(
			on("destroy", infraChange(airlock.TierDestructive, "destroys virtual machines")),
			on("global-status help --help -h", read("shows virtual machines")),
			on("version --version -v", infraRead("checks for a newer vagrant")),
			on("status ssh-config port box", exec("shows virtual machines, running the Vagrantfile")),
			on("ssh rdp powershell winrm winrm-config", infraChange(airlock.TierPrivileged, "opens a shell in a virtual machine")),
			on("share cloud", net(airlock.ClassNetHTTP, "talks to Vagrant's cloud")),
			on("plugin", install(airlock.TierNetworkEgress, "installs vagrant plugins, which are Ruby code")),
			onRule("package", tool{reason: "packages a virtual machine", getopt: getopt{long: names("--output"),
				roles: map[string]role{"--output": writesFile}}}.rule),
		)),
	}
})

// sent raises a rule's effect by the secrets the command names.
func sent(r rule, skip ...string) rule {
	return func(c *call) effect {
		e := r(c)
		c.raiseSent(&e, skip...)
		return e
	}
}

// console reads expressions from standard input (terraform console):
// their functions read any file (file("~/.ssh/id_rsa")).
func console(lang string) rule {
	return func(c *call) effect {
		return worse(infraRead("evaluates "+lang+" expressions"), c.stdinCode(lang, false))
	}
}

// kubeconfig: a kubeconfig named on the command line is loaded whole, and
// its users' exec credential plugins are commands kubectl and helm run.
func (c *call) kubeconfig(e *effect) {
	if len(c.values("--kubeconfig")) > 0 {
		*e = worse(*e, env("loads the kubeconfig --kubeconfig names, whose credential plugins run commands"))
	}
}

// kubeAuth are the options that use a key or certificate to authenticate.
var kubeAuth = []string{"--client-key", "--client-certificate", "--certificate-authority", "--kubeconfig",
	"--key-file", "--cert-file", "--ca-file", "--keyring", "--kube-ca-file", "--registry-config", "--repository-config"}

var kubeOpts = getopt{short: "nsv", long: names("--namespace --context --cluster --kubeconfig --server --token " +
	"--user --as --as-group --as-uid --certificate-authority --client-certificate --client-key " +
	"--request-timeout --tls-server-name --cache-dir --profile --profile-output --vmodule --log-file"), exact: true}

// kubectl: its subcommand, then what its options add: a kubeconfig that
// runs plugins, a --server that receives the credentials, files sent
// (--from-file) and files written (--log-file).
func kubectl(c *call) effect {
	sub, rest, ok := subcommand(c.args, kubeOpts)
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	e := kubectlSub(c, sub, rest)
	c.kubeconfig(&e)
	if s := c.values("-s", "--server"); len(s) > 0 && e.tier < airlock.TierPrivileged {
		e = infraChange(airlock.TierPrivileged, "sends the cluster credentials to the server "+s[0].text)
	}
	c.raiseSent(&e, kubeAuth...)
	c.writesTo(&e, "writes a log, profile or cache where an option says", c.values("--log-file", "--profile-output", "--cache-dir")...)
	return e
}

func kubectlSub(c *call, sub string, rest []arg) effect {
	ops := operands(rest, "-n", "--namespace", "-o", "--output", "-l", "--selector", "-f", "--filename",
		"-c", "--container", "--field-selector", "--sort-by", "--template", "-p", "--patch", "--type", "--replicas")
	secrets := effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads Kubernetes secrets"}
	switch sub {
	case "get", "describe":
		for _, op := range ops {
			r := strings.ToLower(op.val)
			if r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret/") || strings.HasPrefix(r,
				"secrets/") || strings.HasPrefix(r, "secret.") || strings.HasPrefix(r, "secrets.") || strings.Contains(r, ",secret") {
				if sub == "get" {
					return secrets
				}
			}
		}
		if raw, ok := valueOf(rest, "--raw"); ok && strings.Contains(raw.val, "secrets") {
			return secrets
		}
		return infraRead("reads cluster resources")
	case "kustomize":
		c.kustomize(rest)
		return infraRead("renders manifests")
	case "", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "diff", "wait",
		"events", "auth", "completion", "options", "help", "plugin", "whoami":
		if sub == "whoami" && hasOption(rest, "-t", "--show-token") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints the cluster token"}
		}
		return infraRead("reads cluster resources")
	case "config":
		if len(ops) > 0 && ops[0].val == "view" && hasOption(rest, "--raw") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints cluster credentials"}
		}
		if len(ops) == 0 || strings.HasPrefix(ops[0].val, "get-") || ops[0].val == "view" || ops[0].val == "current-context" {
			return infraRead("reads kubeconfig")
		}
		// A user's exec plugin is a command kubectl runs for every request.
		if hasOption(rest, "--exec-command", "--exec-arg", "--exec-env", "--auth-provider", "--auth-provider-arg") ||
			len(ops) > 1 && ops[0].val == "set" && (strings.Contains(ops[1].val, ".exec") || strings.Contains(ops[1].val, "auth-provider")) {
			return env("sets a credential plugin, a command kubectl runs for every request")
		}
		return write(airlock.ClassFSWrite, "changes kubeconfig")
	case "rollout":
		if len(ops) > 0 && (ops[0].val == "status" || ops[0].val == "history") {
			return infraRead("reads rollout status")
		}
		return infraChange(airlock.TierDestructive, "changes a rollout")
	case "create", "sa", "serviceaccounts":
		// create token mints a credential and prints it; so do oc's
		// get-token and new-token.
		if len(ops) > 0 && (ops[0].val == "token" || ops[0].val == "get-token" || ops[0].val == "new-token") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "creates and prints a cluster token"}
		}
		if sub != "create" {
			return infraRead("reads service accounts")
		}
		fallthrough
	case "apply", "patch", "replace", "scale", "set", "edit", "label", "annotate", "cordon", "uncordon",
		"autoscale", "expose", "taint", "certificate":
		c.kustomize(rest)
		return infraChange(airlock.TierDestructive, "changes cluster resources ("+c.name+" "+sub+")")
	case "delete", "drain":
		return infraChange(airlock.TierDestructive, "deletes or evicts cluster resources ("+c.name+" "+sub+")")
	case "exec", "cp", "port-forward", "run", "debug", "attach", "proxy", "rsh", "rsync":
		e := infraChange(airlock.TierPrivileged, "runs or reaches into workloads ("+c.name+" "+sub+")")
		c.raiseReads(&e, c.values("--www", "-w")...)
		return e
	}
	return infraChange(airlock.TierDestructive, "runs "+c.name+" "+sub)
}

// kustomize: --helm-command names the helm that runs; exec plugins run
// commands from the kustomization.
func (c *call) kustomize(rest []arg) {
	for _, h := range optValues(rest, "--helm-command") {
		c.runWords("kustomize --helm-command", []arg{h}, input{})
	}
	if hasOption(rest, "--enable-exec") {
		c.runUnknown("kustomize --enable-exec", c.text(), "runs the exec plugins of a kustomization")
	}
}

func valueOf(args []arg, opts ...string) (arg, bool) {
	vs := optValues(args, opts...)
	if len(vs) == 0 {
		return arg{}, false
	}
	return vs[0], true
}

var helmOpts = getopt{short: "n",
	long: names("--namespace --kube-context --kubeconfig --kube-apiserver --kube-token --registry-config " +
		"--repository-config --repository-cache"), exact: true}

var helmVerbs = lazy(func() rule {
	return use(infraChange(airlock.TierDestructive, "runs a helm command")).withNone(read("shows helm help")).with(helmOpts).on(
		on("install upgrade rollback uninstall delete del un test", infraChange(airlock.TierDestructive, "changes releases in a cluster")),
		on("list ls status get history hist show inspect search verify", infraRead("reads releases or charts")),
		on("template lint version env completion help create", read("renders or checks charts")),
		on("package", write(airlock.ClassFSWrite, "packages a chart")),
		on("repo pull fetch dependency dep plugin registry", net(airlock.ClassNetHTTP, "downloads charts or plugins")),
		on("push", publish("publishes a chart")),
	)
})

// helm: its subcommand, then what options add: a --post-renderer it runs,
// a chart it downloads, release contents that hold secrets, folders it
// writes.
func helm(c *call) effect {
	e := helmVerbs(c)
	sub, rest, _ := subcommand(c.args, helmOpts)
	for _, p := range c.values("--post-renderer") {
		c.runWords("helm --post-renderer", append([]arg{p}, c.values("--post-renderer-args")...), input{})
	}
	ops := operands(rest, "-f", "--values", "--set", "--set-file", "--set-string", "--set-json", "--version", "--repo",
		"-n", "--namespace", "--post-renderer", "--post-renderer-args", "--output-dir", "-d", "--destination",
		"--untardir", "-o", "--output", "--api-versions", "--kube-version", "--show-only", "-s")
	switch sub {
	case "template", "lint", "show", "inspect":
		if len(c.values("--repo")) > 0 || slices.ContainsFunc(ops, func(a arg) bool { return strings.Contains(a.val, "://") }) {
			e = worse(e, net(airlock.ClassNetHTTP, "downloads the chart it renders"))
		}
	case "get":
		if len(ops) > 0 && (ops[0].val == "manifest" || ops[0].val == "all" || ops[0].val == "values") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
				reason: "prints a release's manifests or values, which hold its secrets"}
		}
	case "create":
		c.raiseWrites(&e, ops...)
	}
	c.writesTo(&e, "writes charts or manifests where an option says", c.values("--output-dir", "-d", "--destination", "--untardir")...)
	c.kubeconfig(&e)
	c.raiseSent(&e, kubeAuth...)
	return e
}

// terraformGlobals are the options before a terraform (or terragrunt)
// subcommand that take a value in the next word.
var terraformGlobals = []string{"--terragrunt-tfpath", "--tf-path", "--terragrunt-config", "--config",
	"--terragrunt-working-dir", "--working-dir"}

// terraformOutputs are terraform's flags (Go's) whose value is a file it
// writes.
var terraformOutputs = names("-out -state-out -backup -generate-config-out")

// terraform: the subcommand; terragrunt's --tf-path names the program it
// runs as terraform; output files; secrets named are read out.
func terraform(c *call) effect {
	for _, p := range c.values("--terragrunt-tfpath", "--tf-path", "-tf-path") {
		c.runWords(c.name+" --tf-path", []arg{p}, input{})
	}
	args := c.args
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") {
		if slices.Contains(terraformGlobals, args[0].val) && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:] // -chdir=DIR, -help, -version
	}
	if len(args) > 0 && args[0].val == "run-all" || len(args) > 0 && args[0].val == "run" && hasOption(args, "--all") {
		args = args[1:]
	}
	e := c.delegate(args, terraformSub)
	c.writesTo(&e, "writes a plan or state where an option says",
		goOptions(terraformOutputs...).values(args, terraformOutputs...)...)
	c.raiseSent(&e)
	return e
}

func terraformSub(c *call) effect {
	args := c.args
	if len(args) == 0 {
		return read("shows terraform help")
	}
	ops := operands(args[1:])
	plain := effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
		reason: "prints state or outputs with sensitive values in plain text"}
	switch sub := args[0].val; sub {
	case "console":
		return c.delegate(args[1:], console("Terraform"))
	case "output", "show":
		if hasOption(args, "-json", "-raw") {
			return plain
		}
		return infraRead("reads state or a plan")
	case "providers":
		e := infraRead("reads or downloads providers")
		if len(ops) > 1 && ops[0].val == "mirror" {
			c.raiseWrites(&e, ops[1:]...)
		}
		return e
	case "plan", "validate", "init", "graph", "version", "get", "metadata", "modules", "query":
		return infraRead("reads or plans infrastructure")
	case "fmt":
		if hasOption(args, "-check", "-write=false") {
			return read("checks formatting")
		}
		e := write(airlock.ClassFSWrite, "formats configuration files")
		c.raiseWrites(&e, ops...)
		return e
	case "state":
		if len(ops) > 0 && ops[0].val == "pull" {
			return plain
		}
		if len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show") {
			return infraRead("reads state")
		}
		return infraChange(airlock.TierDestructive, "changes infrastructure state")
	case "workspace":
		if len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show") {
			return read("lists workspaces")
		}
		if len(ops) > 0 && ops[0].val == "delete" {
			return infraChange(airlock.TierDestructive, "deletes a workspace")
		}
		return write(airlock.ClassFSWrite, "changes the workspace")
	case "login":
		return net(airlock.ClassNetHTTP, "signs in to a Terraform host, storing its token")
	case "logout":
		return write(airlock.ClassFSWrite, "changes credentials")
	}
	return infraChange(airlock.TierDestructive, "changes infrastructure ("+c.name+" "+args[0].val+")")
}

var pulumiOpts = getopt{short: "sC", long: names("--stack --cwd"), exact: true}

func pulumi(c *call) effect {
	sub, rest, _ := subcommand(c.args, pulumiOpts)
	ops := operands(rest, "-s", "--stack", "-C", "--cwd")
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].val
	}
	var e effect
	switch {
	case hasOption(c.args, "--show-secrets"), sub == "env" && (verb == "open" || verb == "get"):
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "prints secrets in plain text"}
	case sub == "env" && verb == "run":
		// env run ENV -- COMMAND runs the command with the secrets in its environment.
		if rest := gitAfter(c.args, "--"); len(rest) > 0 {
			c.run("pulumi env run", rest, effect{})
		}
		e = infraChange(airlock.TierPrivileged, "runs a command with an environment's secrets")
	case sub == "stack" && (verb == "rm" || verb == "import" || verb == "change-secrets-provider" || verb == "rename"):
		e = infraChange(airlock.TierDestructive, "changes or removes a stack's state")
	case sub == "plugin" && (verb == "install" || verb == "rm"):
		e = install(airlock.TierNetworkEgress, "installs or removes plugins")
	case sub == "" || sub == "preview" || sub == "pre" || sub == "stack" || sub == "config" || sub == "whoami" ||
		sub == "version" || sub == "about" || sub == "logs" || sub == "help" || sub == "plugin" || sub == "schema":
		e = infraRead("reads or previews infrastructure")
	case sub == "up" || sub == "update" || sub == "destroy" || sub == "refresh" || sub == "import" || sub == "state" ||
		sub == "cancel" || sub == "watch":
		e = infraChange(airlock.TierDestructive, "changes infrastructure (pulumi "+sub+")")
	default:
		e = infraChange(airlock.TierDestructive, "runs pulumi "+sub)
	}
	c.raiseSent(&e)
	return e
}

// ansibleAuth are the options that only use a key or a vault password.
var ansibleAuth = []string{"--private-key", "--key-file", "--vault-password-file", "--vault-pass-file", "--vault-id",
	"--connection-password-file", "--become-password-file"}

// ansible: ad-hoc modules that run commands (-m shell -a CMD) are analysed;
// --become runs tasks as root.
func ansible(c *call) effect {
	e := infraChange(airlock.TierDestructive, "runs tasks on other hosts")
	if c.has("--check", "-C", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--version") {
		e = infraRead("checks playbooks")
	}
	module := "command"
	if m, ok := c.value("-m", "--module-name"); ok {
		module = strings.TrimPrefix(strings.TrimPrefix(m.val, "ansible.builtin."), "ansible.legacy.")
	}
	for _, a := range c.values("-a", "--args") {
		switch {
		case !a.static:
			c.runUnknown("ansible -a", a.text, "runs module arguments only known at run time")
		case module == "shell" || module == "raw" || module == "command" || module == "expect":
			c.runScript("ansible -m "+module, ansibleFreeForm(a.val), input{})
		case module == "script":
			x := exec("runs a local script on the hosts")
			c.raiseReads(&x, literal(ansibleFreeForm(a.val)))
			e = worse(e, x)
		}
	}
	if c.has("-b", "--become") {
		e = worse(e, infraChange(airlock.TierPrivileged, "runs tasks as root (--become)"))
	}
	c.raiseSent(&e, ansibleAuth...)
	return e
}

// ansibleFreeForm is a command module's free-form command, without its
// key=value parameters (chdir=/x creates=y).
func ansibleFreeForm(v string) string {
	fields := strings.Fields(v)
	for len(fields) > 0 {
		k, _, ok := strings.Cut(fields[0], "=")
		switch k {
		case "chdir", "creates", "removes", "executable", "warn", "stdin", "stdin_add_newline", "strip_empty_ends":
			if ok {
				fields = fields[1:]
				continue
			}
		}
		break
	}
	return strings.Join(fields, " ")
}

var dockerGroups = map[string]bool{
	"container": true, "image": true, "volume": true, "network": true, "system": true, "builder": true,
	"buildx": true, "context": true, "plugin": true, "manifest": true, "node": true, "service": true,
	"stack": true, "secret": true, "config": true, "swarm": true, "trust": true, "compose": true, "scout": true,
}

// dockerVerbs classifies docker subcommands, "group verb" for the
// management commands ("container rm").
var dockerVerbs = sync.OnceValue(buildDockerVerbs)

func buildDockerVerbs() map[string]effect {
	verbs := map[string]effect{}
	add := func(e effect, names string) {
		for _, n := range strings.Split(names, ",") {
			verbs[strings.TrimSpace(n)] = e
		}
	}
	inspects := effect{class: airlock.ClassInfraRead, cap: airlock.CapWorkspaceRead, tier: airlock.TierRead, reason: "reads containers or images"}
	add(inspects, `ps, images, logs, inspect, version, info, top, stats, port, diff, events, history, wait,
		container ls, container list, container ps, container inspect, container logs, container top,
		container port, container diff, container stats, container wait, image ls, image list, image inspect,
		image history, volume ls, volume list, volume inspect, network ls, network list, network inspect,
		system df, system info, system events, context ls, context list, context show, context inspect,
		plugin ls, plugin list, plugin inspect, node ls, node inspect, node ps, service ls, service ps,
		service inspect, service logs, stack ls, stack ps, stack services, secret ls, secret inspect,
		config ls, config inspect, buildx ls, buildx inspect, buildx version, buildx du, builder ls,
		builder inspect, compose ps, compose logs, compose config, compose ls, compose images,
		compose top, compose version, compose port, compose events`)
	add(net(airlock.ClassNetHTTP, "talks to an image registry"), `pull, push, login, search, image pull, image push,
		manifest push, manifest create, manifest annotate, compose pull, compose push, trust sign, trust revoke,
		manifest inspect, trust inspect, scout cves, scout quickview, scout sbom, scout recommendations, compose convert`)
	add(effect{class: airlock.ClassProcessExec, cap: airlock.CapNetworkEgress, tier: airlock.TierNetworkEgress, reason: "builds an image, running its steps"},
		`build, image build, buildx build, buildx bake, compose build, builder build`)
	add(effect{class: airlock.ClassProcessExec, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "runs a container, which can mount the host and act as root"},
		`run, exec, create, start, restart, attach, update, debug, container run, container exec, container create,
		container start, container restart, container attach, container update, compose up, compose run,
		compose exec, compose start, compose create, compose restart, compose watch, service create,
		service update, service scale, stack deploy, stack up, swarm init, swarm join, plugin install,
		plugin enable, plugin upgrade`)
	add(infraChange(airlock.TierDestructive, "removes containers, images, volumes or networks"),
		`rm, rmi, kill, container rm, container prune, container kill, image rm, image prune, volume rm,
		volume prune, network rm, network prune, system prune, builder prune, buildx prune, buildx rm,
		compose down, compose rm, compose kill, stack rm, service rm, secret rm, config rm, swarm leave,
		plugin rm, plugin disable, context rm, node rm`)
	add(infraChange(airlock.TierWrite, "changes containers or images"),
		`stop, pause, unpause, rename, tag, cp, save, load, export, import, commit, logout, container stop,
		container pause, container unpause, container rename, container cp, container export, container commit,
		image tag, image save, image load, image import, volume create, network create, network connect,
		network disconnect, context create, context update, context use, context export, context import,
		compose stop, compose pause, compose unpause, compose cp, secret create, config create, buildx create,
		buildx use, buildx stop`)
	return verbs
}

var dockerOpts = getopt{short: "Hcl", long: names("--host --context --config --log-level --tlscacert --tlscert " +
	"--tlskey --url --connection --identity --root --runroot --storage-driver"), exact: true}

// dockerAuth are the options that use keys to reach the daemon.
var dockerAuth = []string{"--tlscacert", "--tlscert", "--tlskey", "--config", "--identity"}

// dockerOutputs are the verbs whose -o (--output) is a file they write.
var dockerOutputs = stringSet("save", "image save", "export", "container export", "build", "image build", "buildx build",
	"builder build", "buildx bake", "compose config", "compose convert", "scout cves", "scout sbom", "scout quickview")

func docker(c *call) effect {
	p := dockerOpts.split(c.args)
	sub, rest, ok := subcommand(c.args, dockerOpts)
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if sub == "" {
		return read("shows help")
	}
	key := sub
	if dockerGroups[sub] {
		if sub2, _, ok := subcommand(rest, composeOpts); ok && sub2 != "" {
			key = sub + " " + sub2
		}
	}
	e := dockerEffect(c, key, rest)
	// A daemon reached over TCP or ssh is on another machine.
	if h, ok := p.value("-H", "--host", "--url"); ok && (!h.static || strings.Contains(h.val, "://") &&
		!strings.HasPrefix(h.val, "unix://") && !strings.HasPrefix(h.val, "npipe://")) {
		e = worse(e, net(airlock.ClassNetConnect, "talks to the container daemon of another machine ("+h.text+")"))
	}
	// The configuration folder's cli-plugins hold the programs that run as
	// docker compose, buildx and scout.
	if _, ok := p.value("--config"); ok && dockerGroups[sub] && (sub == "compose" || sub == "buildx" || sub == "scout") {
		e = worse(e, exec("runs a docker CLI plugin from the --config folder"))
	}
	c.raiseSent(&e, dockerAuth...)
	return e
}

// dockerEffect classifies a docker verb ("cp", "container cp"), with the
// files it writes.
func dockerEffect(c *call, key string, rest []arg) effect {
	e, ok := dockerVerbs()[key]
	if !ok {
		return effect{class: airlock.ClassInfraChange, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "runs " + c.name + " " + key + ", which Airlock does not know"}
	}
	switch {
	case key == "cp" || key == "container cp" || key == "compose cp":
		if ops := operands(rest); len(ops) > 0 && !strings.Contains(ops[len(ops)-1].val, ":") {
			c.raiseWrites(&e, ops[len(ops)-1])
		}
	case key == "context export":
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "exports a context with its TLS keys"}
	case (key == "import" || key == "image import") && slices.ContainsFunc(operands(rest), func(a arg) bool { return strings.Contains(a.val, "://") }):
		e = worse(e, net(airlock.ClassNetHTTP, "downloads an image"))
	case dockerOutputs[key]:
		var outs []arg
		for _, o := range append(optValues(rest, "-o", "--output"), optValues(rest, "--iidfile", "--metadata-file")...) {
			// build --output type=local,dest=DIR, or a plain path.
			dest := o.val
			for _, part := range strings.Split(o.val, ",") {
				if d, ok := strings.CutPrefix(part, "dest="); ok {
					dest = d
				} else if strings.HasPrefix(part, "type=") {
					dest = ""
				}
			}
			if dest != "" && dest != "-" {
				outs = append(outs, arg{val: dest, text: quote(dest), static: o.static, glob: o.glob})
			}
		}
		c.writesTo(&e, "writes files where -o says", outs...)
	}
	return e
}

// composeOpts are the options of docker compose before its verb.
var composeOpts = getopt{short: "fp", long: names("--file --project-name --project-directory --profile --env-file"),
	exact: true}

// compose is docker-compose: the docker verbs under "compose".
func compose(c *call) effect {
	sub, rest, ok := subcommand(c.args, composeOpts)
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if _, ok := dockerVerbs()["compose "+sub]; !ok {
		return effect{class: airlock.ClassInfraChange, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "runs " + c.name + " " + sub}
	}
	e := dockerEffect(c, "compose "+sub, rest)
	c.raiseSent(&e)
	return e
}

var awsOpts = getopt{long: names("--profile --region --output --endpoint-url --query --color --ca-bundle " +
	"--cli-read-timeout --cli-connect-timeout --cli-binary-format"), exact: true}

// aws: the service and operation decide (cloudEffect); configure and the
// high-level s3 commands have rules of their own; a positional operand
// after the operation is a file it writes (s3api get-object ... OUTFILE).
func aws(c *call) effect {
	e := awsCommand(c)
	c.raiseSent(&e, "--ca-bundle")
	return e
}

func awsCommand(c *call) effect {
	rest := awsOpts.split(c.args).ops
	ops := operands(rest, awsOpts.long...)
	if len(ops) == 0 {
		return read("shows aws help")
	}
	if !ops[0].static || len(ops) > 1 && !ops[1].static {
		return unknown("runs aws with a command only known at run time")
	}
	op := ""
	if len(ops) > 1 {
		op = ops[1].val
	}
	switch svc := ops[0].val; {
	case svc == "configure":
		return awsConfigure(c, ops[1:])
	case svc == "s3" && op == "mv":
		return infraChange(airlock.TierDestructive, "moves objects, deleting the source")
	case svc == "ssm" && strings.HasPrefix(op, "get-parameter") && hasOption(rest, "--with-decryption"):
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
			reason: "reads decrypted parameters, which hold secrets"}
	}
	words := []string{ops[0].val}
	if op != "" {
		words = append(words, op)
	}
	e := cloudEffect("aws", words)
	if last := rest[len(rest)-1]; len(ops) > 2 && last.static && !strings.HasPrefix(last.val, "-") &&
		!strings.Contains(last.val, "://") && !strings.HasPrefix(rest[len(rest)-2].val, "--") {
		c.writesTo(&e, "writes the response into a file", last)
	}
	c.writesTo(&e, "writes a file where an option says", optValues(rest, "--output-template-file", "--outfile")...)
	return e
}

// awsConfigure: reading keys is a credential read; cli_pager names a
// command aws runs on its output, credential_process one it runs for keys.
func awsConfigure(c *call, ops []arg) effect {
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].val
	}
	switch verb {
	case "list", "list-profiles":
		return read("shows AWS configuration")
	case "get", "export-credentials":
		return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads AWS configuration, which may hold keys"}
	case "set":
		if len(ops) > 2 {
			key := strings.ToLower(ops[1].val)
			key = key[strings.LastIndexByte(key, '.')+1:]
			switch {
			case key == "cli_pager":
				c.runWords("aws cli_pager", ops[2:3], input{})
			case key == "credential_process" || key == "credential_source" || key == "ca_bundle":
				return env("sets " + ops[1].val + ", which makes aws run a command or trust other servers")
			}
		}
	}
	return write(airlock.ClassFSWrite, "changes AWS credentials or configuration")
}

// cloud classifies CLIs whose command path is a run of words
// ("gcloud compute instances delete NAME"): the verbs decide. A copy or a
// download writes its local destination; secrets named are sent.
func cloud(cli string) rule {
	return func(c *call) effect {
		var words []string
		for _, a := range c.args {
			if !a.static || strings.HasPrefix(a.val, "-") {
				break
			}
			words = append(words, a.val)
		}
		if len(words) == 0 {
			if len(c.args) > 0 && !c.args[0].static {
				return unknown("runs " + cli + " with a command only known at run time")
			}
			return read("shows " + cli + " help")
		}
		e := cloudEffect(cli, words)
		c.cloudWrites(&e, words)
		c.raiseSent(&e, "--key-file", "--ssh-key-file", "--private-key", "--identity-file", "-i", "--ssh-key",
			"--credential-file-override", "--cert-file", "--ca-file")
		return e
	}
}

// cloudWrites raises a copy or download by the local file it writes: the
// last operand of cp, mv, sync, rsync or scp when it is not remote, or the
// file a download's option names.
func (c *call) cloudWrites(e *effect, words []string) {
	download := false
	for _, w := range words {
		switch {
		case w == "cp" || w == "mv" || w == "sync" || w == "rsync" || w == "scp":
			if ops := c.operands(); len(ops) > 0 {
				if last := ops[len(ops)-1]; !isRemote(last) && !strings.HasPrefix(last.val, "gs:") {
					c.writesTo(e, "copies into a local file", last)
				}
			}
		case strings.Contains(w, "download") || strings.Contains(w, "export") || strings.Contains(w, "pull"):
			download = true
		}
	}
	if download {
		c.writesTo(e, "downloads into a local file", c.values("--file", "-f", "--destination", "--dest", "-d",
			"--output-file", "--output-path", "--download-path", "--path", "-o", "--output-directory")...)
	}
}

var (
	cloudReads = stringSet("describe", "list", "ls", "get", "show", "head", "lookup", "search", "query",
		"scan", "validate", "estimate", "preview", "check", "wait", "print", "cat", "du", "stat", "logs", "log",
		"tail", "version", "help", "info", "status", "whoami", "view", "inspect", "simulate", "filter",
		"batch-get", "select", "presign", "history", "diff", "open", "docs", "browse")
	cloudDestroys = stringSet("delete", "remove", "rm", "terminate", "destroy", "rb", "purge", "deregister",
		"deprovision", "drop", "erase", "wipe", "kill", "uninstall", "unpublish", "disable", "revoke", "detach",
		"cancel", "down")
	cloudLocal = stringSet("login", "logout", "configure", "config", "init", "auth", "link", "unlink",
		"completion", "completions", "alias", "profile", "use", "switch")
	cloudSecrets = []string{"secret", "token", "password", "credential", "decrypt", "assume", "access-key",
		"api-key", "keys", "kubeconfig", "connection-string", "sas", "data-key"}
	cloudIdentity = stringSet("iam", "sts", "organizations", "sso-admin", "identitystore", "roles", "role",
		"ad", "identity", "service-accounts", "policy", "add-iam-policy-binding", "set-iam-policy",
		"remove-iam-policy-binding", "permissions", "rbac")
	// cloudShells run commands or a shell on a cloud machine, or grant
	// access to one.
	cloudShells = stringSet("ssh", "run-command", "execute-command", "start-session", "send-command",
		"connect-to-serial-port", "serial-port", "start-iap-tunnel", "send-ssh-public-key", "rsh", "exec",
		"ps:exec", "console", "config-ssh", "open-tunnel", "invoke-command")
	// cloudPrints are words that print a credential by themselves (fly auth
	// token, gcloud config config-helper).
	cloudPrints = stringSet("token", "tokens", "config-helper", "print-token", "credentials", "connection-string")
)

func stringSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// cloudEffect: a credential read (secrets, tokens) or a deletion anywhere
// wins; otherwise the first known verb decides; identity changes are
// privileged; anything else creates or changes billed resources.
func cloudEffect(cli string, words []string) effect {
	anyRead, identity := false, false
	first := ""
	// heroku config:get, netlify env:list: the colon separates words too.
	var split []string
	for _, w := range words {
		split = append(split, strings.Split(strings.ToLower(w), ":")...)
	}
	secrets := effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
		reason: "reads cloud credentials or secrets (" + cli + " " + strings.Join(words, " ") + ")"}
	for i, w := range split {
		next := ""
		if i+1 < len(split) {
			next = split[i+1]
		}
		switch {
		case cloudShells[w] || cli == "heroku" && i == 0 && (w == "run" || w == "local"),
			strings.Contains(w, "ssh-key") && (next == "add" || next == "create" || next == "import"):
			return infraChange(airlock.TierPrivileged, "runs commands or a shell on a cloud machine, or grants access to one ("+
				cli+" "+strings.Join(words, " ")+")")
		case i > 0 && cloudPrints[w],
			// Environment variables and app config hold an app's secrets.
			w == "env" && (next == "get" || next == "pull" || next == "list" || next == "ls" || next == "export"),
			cli == "heroku" && w == "config" && (next == "" || next == "get"):
			return secrets
		}
	}
	for _, w := range split {
		verb, _, _ := strings.Cut(w, "-")
		isRead := cloudReads[w] || cloudReads[verb] || w == "access" || strings.HasPrefix(w, "print-")
		if cloudIdentity[w] {
			identity = true
		}
		for _, s := range cloudSecrets {
			if strings.Contains(w, s) && (isRead || verb == "generate" || w == "assume-role" || strings.HasPrefix(w, "assume-role") || w == "decrypt") {
				return secrets
			}
		}
		if cloudDestroys[w] || cloudDestroys[verb] {
			return infraChange(airlock.TierDestructive, "deletes cloud resources ("+cli+" "+strings.Join(words, " ")+")")
		}
		if first == "" {
			switch {
			case isRead:
				first = "read"
			case cloudLocal[w]:
				first = "local"
			}
		}
		anyRead = anyRead || isRead
	}
	switch {
	case first == "local" && anyRead && (words[0] == "configure" || words[0] == "config"):
		return read("shows " + cli + " configuration")
	case first == "local":
		return write(airlock.ClassFSWrite, "changes "+cli+" configuration or login")
	case first == "read" || anyRead:
		return infraRead("reads cloud resources (" + cli + " " + strings.Join(words, " ") + ")")
	case identity:
		return infraChange(airlock.TierPrivileged, "changes cloud identities or permissions ("+cli+" "+strings.Join(words, " ")+")")
	}
	return spend("creates or changes billed cloud resources (" + cli + " " + strings.Join(words, " ") + ")")
}

package shell

import (
	"slices"
	"strings"

	"github.com/airlock-dev/airlock"
)

// Infrastructure and cloud: Kubernetes, Helm, Terraform, Pulumi, Ansible,
// containers and the cloud CLIs.

var infraCommands = map[string]rule{
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
	"packer": use(infraChange(airlock.TierSpend,
		"builds machine images")).on(on("validate fmt inspect version init console", infraRead("checks templates"))),
	"vagrant": use(infraChange(airlock.TierWrite, "manages virtual machines")).on(on("destroy",
		infraChange(airlock.TierDestructive, "destroys virtual machines")),
		on("status global-status ssh-config version box", read("shows virtual machines")), on("ssh",
			infraChange(airlock.TierPrivileged, "opens a shell in a virtual machine"))),
}

var kubeOpts = optSpec{short: "nsv", long: []string{"--namespace", "--context", "--cluster", "--kubeconfig", "--server",
	"--token", "--user", "--as", "--as-group", "--as-uid", "--certificate-authority", "--client-certificate",
	"--client-key", "--request-timeout", "--tls-server-name", "--cache-dir", "--profile", "--profile-output",
	"--vmodule", "--log-file"}}

func kubectl(c *call) effect {
	sub, rest, ok := subcommand(c.args, kubeOpts)
	if !ok {
		return unknown("runs kubectl with a subcommand only known at run time")
	}
	ops := operands(rest, "-n", "--namespace", "-o", "--output", "-l", "--selector", "-f", "--filename",
		"-c", "--container", "--field-selector", "--sort-by", "--template", "-p", "--patch", "--type", "--replicas")
	switch sub {
	case "get", "describe":
		for _, op := range ops {
			r := strings.ToLower(op.val)
			if r == "secret" || r == "secrets" || strings.HasPrefix(r, "secret/") || strings.HasPrefix(r,
				"secrets/") || strings.Contains(r, ",secret") {
				if sub == "get" {
					return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead,
						tier: airlock.TierPrivileged, reason: "reads Kubernetes secrets"}
				}
			}
		}
		return infraRead("reads cluster resources")
	case "", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "diff", "wait",
		"events", "auth", "completion", "options", "help", "kustomize", "plugin":
		return infraRead("reads cluster resources")
	case "config":
		if len(ops) > 0 && ops[0].val == "view" && hasOption(rest, "--raw") {
			return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "prints cluster credentials"}
		}
		if len(ops) == 0 || strings.HasPrefix(ops[0].val, "get-") || ops[0].val == "view" || ops[0].val == "current-context" {
			return infraRead("reads kubeconfig")
		}
		return write(airlock.ClassFSWrite, "changes kubeconfig")
	case "rollout":
		if len(ops) > 0 && (ops[0].val == "status" || ops[0].val == "history") {
			return infraRead("reads rollout status")
		}
		return infraChange(airlock.TierDestructive, "changes a rollout")
	case "apply", "create", "patch", "replace", "scale", "set", "edit", "label", "annotate", "cordon", "uncordon",
		"autoscale", "expose", "taint", "certificate":
		return infraChange(airlock.TierDestructive, "changes cluster resources (kubectl "+sub+")")
	case "delete", "drain":
		return infraChange(airlock.TierDestructive, "deletes or evicts cluster resources (kubectl "+sub+")")
	case "exec", "cp", "port-forward", "run", "debug", "attach", "proxy":
		return infraChange(airlock.TierPrivileged, "runs or reaches into workloads (kubectl "+sub+")")
	}
	return infraChange(airlock.TierDestructive, "runs kubectl "+sub)
}

var helm = use(infraChange(airlock.TierDestructive, "runs a helm command")).withNone(read("shows helm help")).with(
	optSpec{short: "n", long: []string{"--namespace", "--kube-context", "--kubeconfig", "--kube-apiserver",
		"--kube-token", "--registry-config", "--repository-config", "--repository-cache"}}).on(
	on("install upgrade rollback uninstall delete del un test", infraChange(airlock.TierDestructive, "changes releases in a cluster")),
	on("list ls status get history hist show inspect search verify", infraRead("reads releases or charts")),
	on("template lint version env completion help create", read("renders or checks charts")),
	on("package", write(airlock.ClassFSWrite, "packages a chart")),
	on("repo pull fetch dependency dep plugin registry", net(airlock.ClassNetHTTP, "downloads charts or plugins")),
	on("push", publish("publishes a chart")),
)

func terraform(c *call) effect {
	args := c.args
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].val, "-") {
		args = args[1:] // -chdir=DIR, -help, -version
	}
	if len(args) > 0 && args[0].val == "run-all" || len(args) > 0 && args[0].val == "run" && hasOption(args, "--all") {
		args = args[1:]
	}
	if len(args) == 0 {
		return read("shows terraform help")
	}
	ops := operands(args[1:])
	switch sub := args[0].val; sub {
	case "plan", "validate", "show", "output", "init", "providers", "graph", "version", "get", "console", "metadata", "modules", "query":
		return infraRead("reads or plans infrastructure")
	case "fmt":
		if hasOption(args, "-check") {
			return read("checks formatting")
		}
		return write(airlock.ClassFSWrite, "formats configuration files")
	case "state":
		if len(ops) > 0 && (ops[0].val == "list" || ops[0].val == "show" || ops[0].val == "pull") {
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
	case "login", "logout":
		return write(airlock.ClassFSWrite, "changes credentials")
	}
	return infraChange(airlock.TierDestructive, "changes infrastructure (terraform "+args[0].val+")")
}

func pulumi(c *call) effect {
	sub, _, _ := subcommand(c.args, optSpec{short: "sC", long: []string{"--stack", "--cwd"}})
	switch sub {
	case "", "preview", "pre", "stack", "config", "whoami", "version", "about", "logs", "help", "plugin", "schema":
		return infraRead("reads or previews infrastructure")
	case "up", "update", "destroy", "refresh", "import", "state", "cancel", "watch":
		return infraChange(airlock.TierDestructive, "changes infrastructure (pulumi "+sub+")")
	}
	return infraChange(airlock.TierDestructive, "runs pulumi "+sub)
}

func ansible(c *call) effect {
	if c.has("--check", "-C", "--syntax-check", "--list-hosts", "--list-tasks", "--list-tags", "--version") {
		return infraRead("checks playbooks")
	}
	return infraChange(airlock.TierDestructive, "runs tasks on other hosts")
}

var dockerGroups = map[string]bool{
	"container": true, "image": true, "volume": true, "network": true, "system": true, "builder": true,
	"buildx": true, "context": true, "plugin": true, "manifest": true, "node": true, "service": true,
	"stack": true, "secret": true, "config": true, "swarm": true, "trust": true, "compose": true, "scout": true,
}

// dockerVerbs classifies docker subcommands, "group verb" for the
// management commands ("container rm").
var dockerVerbs = buildDockerVerbs()

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
		builder inspect, trust inspect, compose ps, compose logs, compose config, compose ls, compose images,
		compose top, compose version, compose port, compose events, manifest inspect, scout cves, scout quickview`)
	add(net(airlock.ClassNetHTTP, "talks to an image registry"), `pull, push, login, search, image pull, image push,
		manifest push, manifest create, manifest annotate, compose pull, compose push, trust sign, trust revoke`)
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

var dockerOpts = optSpec{short: "Hcl", long: []string{"--host", "--context", "--config", "--log-level",
	"--tlscacert", "--tlscert", "--tlskey", "--url", "--connection", "--identity", "--root", "--runroot", "--storage-driver"}}

func docker(c *call) effect {
	sub, rest, ok := subcommand(c.args, dockerOpts)
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if sub == "" {
		return read("shows help")
	}
	key := sub
	if dockerGroups[sub] {
		o := optSpec{short: "fp", long: []string{"--file", "--project-name", "--project-directory", "--profile", "--env-file"}}
		if sub2, _, ok := subcommand(rest, o); ok && sub2 != "" {
			key = sub + " " + sub2
		}
	}
	e, ok := dockerVerbs[key]
	if !ok {
		return effect{class: airlock.ClassInfraChange, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "runs " + c.name + " " + key + ", which Airlock does not know"}
	}
	if key == "cp" || key == "container cp" || key == "compose cp" {
		if ops := operands(rest); len(ops) > 0 && !strings.Contains(ops[len(ops)-1].val, ":") {
			c.raiseWrites(&e, ops[len(ops)-1])
		}
	}
	return e
}

// compose is docker-compose: the docker verbs under "compose".
func compose(c *call) effect {
	sub, _, ok := subcommand(c.args, optSpec{short: "fp", long: []string{"--file", "--project-name",
		"--project-directory", "--profile", "--env-file"}})
	if !ok {
		return unknown("runs " + c.name + " with a subcommand only known at run time")
	}
	if e, ok := dockerVerbs["compose "+sub]; ok {
		return e
	}
	return effect{class: airlock.ClassInfraChange, cap: airlock.CapHostAdmin, tier: airlock.TierPrivileged, reason: "runs " + c.name + " " + sub}
}

var awsOpts = optSpec{long: []string{"--profile", "--region", "--output", "--endpoint-url", "--query", "--color",
	"--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout", "--cli-binary-format"}}

func aws(c *call) effect {
	_, rest := splitOpts(c.args, awsOpts)
	ops := operands(rest, awsOpts.long...)
	if len(ops) == 0 {
		return read("shows aws help")
	}
	if !ops[0].static || len(ops) > 1 && !ops[1].static {
		return unknown("runs aws with a command only known at run time")
	}
	if ops[0].val == "configure" {
		if len(ops) > 1 && (ops[1].val == "list" || ops[1].val == "get" || ops[1].val == "list-profiles") {
			if ops[1].val == "get" {
				return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged, reason: "reads AWS configuration, which may hold keys"}
			}
			return read("shows AWS configuration")
		}
		return write(airlock.ClassFSWrite, "changes AWS credentials or configuration")
	}
	words := []string{ops[0].val}
	if len(ops) > 1 {
		words = append(words, ops[1].val)
	}
	if ops[0].val == "s3" && len(ops) > 1 && ops[1].val == "mv" {
		return infraChange(airlock.TierDestructive, "moves objects, deleting the source")
	}
	return cloudEffect("aws", words)
}

// cloud classifies CLIs whose command path is a run of words
// ("gcloud compute instances delete NAME"): the verbs decide.
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
		return cloudEffect(cli, words)
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
		"api-key", "keys", "kubeconfig", "connection-string", "sas"}
	cloudIdentity = stringSet("iam", "sts", "organizations", "sso-admin", "identitystore", "roles", "role",
		"ad", "identity", "service-accounts", "policy", "add-iam-policy-binding", "set-iam-policy",
		"remove-iam-policy-binding", "permissions", "rbac")
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
	for _, w := range words {
		w = strings.ToLower(w)
		verb, _, _ := strings.Cut(w, "-")
		isRead := cloudReads[w] || cloudReads[verb] || w == "access" || strings.HasPrefix(w, "print-")
		if cloudIdentity[w] {
			identity = true
		}
		for _, s := range cloudSecrets {
			if strings.Contains(w, s) && (isRead || w == "assume-role" || strings.HasPrefix(w, "assume-role") || w == "decrypt") {
				return effect{class: airlock.ClassCredentialsRead, cap: airlock.CapCredentialsRead, tier: airlock.TierPrivileged,
					reason: "reads cloud credentials or secrets (" + cli + " " + strings.Join(words, " ") + ")"}
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

// raiseSent raises a network program by the secrets its words name: what
// it reads it sends (an upload, a request body, a file:// parameter) or
// prints, which raiseNamed does not judge for programs at network-egress
// and above. Options that only use a key to authenticate (skip) do not
// count.
func (c *call) raiseSent(e *effect, skip ...string) {
	if e.none || e.tier >= airlock.TierPrivileged {
		return
	}
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a.static && slices.Contains(skip, optName(a.val)) {
			if !strings.Contains(a.val, "=") {
				i++
			}
			continue
		}
		v, ok := a.pathValue()
		if !ok {
			continue
		}
		if s, ok := c.secretIn(v, a.glob); ok {
			*e = s
			return
		}
	}
}

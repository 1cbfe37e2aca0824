package shell

import (
	"strings"

	"github.com/airlockhq/airlock/tool"
)

// Remote execution in plain sight: "docker exec C curl ...", "kubectl
// exec P -- curl ...", "docker run IMAGE cmd" run a command the caller
// wrote, elsewhere. It is decided as the command it is (a deny or ask
// rule for curl holds), without the files it names, which are the
// container's, not this machine's. What a run mounts from this machine
// is: "-v /:/h" is a write of / (a read with ":ro").

// dockerRunSpec: the options of docker (podman, nerdctl) run and create
// that take a value; run stops reading options at the image.
var dockerRunSpec = optSpec{short: "acehlmpuvwe", inOrder: true, long: []string{"add-host", "annotation",
	"attach", "blkio-weight", "blkio-weight-device", "cap-add", "cap-drop", "cgroup-parent", "cgroupns",
	"cidfile", "cpu-period", "cpu-quota", "cpu-rt-period", "cpu-rt-runtime", "cpu-shares", "cpus",
	"cpuset-cpus", "cpuset-mems", "detach-keys", "device", "device-cgroup-rule", "device-read-bps",
	"device-read-iops", "device-write-bps", "device-write-iops", "dns", "dns-option", "dns-search",
	"domainname", "entrypoint", "env", "env-file", "expose", "gpus", "group-add", "health-cmd",
	"health-interval", "health-retries", "health-start-interval", "health-start-period",
	"health-timeout", "hostname", "ip", "ip6", "ipc", "isolation", "kernel-memory", "label",
	"label-file", "link", "link-local-ip", "log-driver", "log-opt", "mac-address", "memory",
	"memory-reservation", "memory-swap", "memory-swappiness", "mount", "name", "network",
	"network-alias", "oom-score-adj", "pid", "pids-limit", "platform", "publish", "pull", "restart",
	"runtime", "security-opt", "shm-size", "stop-signal", "stop-timeout", "storage-opt", "sysctl",
	"tmpfs", "ulimit", "user", "userns", "uts", "volume", "volume-driver", "volumes-from", "workdir"}}

// dockerExecSpec: docker exec's options that take a value.
var dockerExecSpec = optSpec{short: "euw", inOrder: true, long: []string{"detach-keys", "env", "env-file",
	"user", "workdir"}}

// kubectlExecSpec: kubectl exec's options that take a value.
var kubectlExecSpec = optSpec{short: "cfn", long: []string{"container", "filename", "namespace",
	"pod-running-timeout", "context", "cluster", "user", "kubeconfig", "server", "token", "as",
	"as-group", "request-timeout"}}

// afterDashDash returns the words after the first literal "--" (the
// command kubectl runs in the pod), and whether there is one.
func afterDashDash(args []shWord) ([]shWord, bool) {
	for j, a := range args {
		if t, _ := a.literal(); t == "--" {
			return args[j+1:], true
		}
	}
	return nil, false
}

// containerPrograms handles docker, podman, nerdctl and kubectl.
func containerPrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	i := 0
	for ; i < len(args); i++ {
		a, lit := args[i].literal()
		if !lit {
			return
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		if !strings.Contains(a, "=") && (a == "-H" || a == "--host" || a == "--context" || a == "-c" ||
			a == "--config" || a == "-n" || a == "--namespace" || a == "--kubeconfig" || a == "--log-level") {
			i++
		}
	}
	if i >= len(args) {
		return
	}
	sub, _ := args[i].literal()
	rest := args[i+1:]
	if name != "kubectl" && sub == "container" && len(rest) > 0 {
		sub, _ = rest[0].literal() // docker container run|exec
		rest = rest[1:]
	}
	if name != "kubectl" && sub == "compose" {
		composePrograms(w, name, rest, in)
		return
	}
	switch {
	case name == "kubectl" && sub == "exec":
		parsed := kubectlExecSpec.parse(rest)
		if cmd, ok := afterDashDash(rest); ok {
			w.remoteCommand(cmd, in, name+" exec")
			return
		}
		if ops := operands(parsed); len(ops) > 1 {
			w.remoteCommand(ops[1:], in, name+" exec") // the old form, without "--"
		}
	case name == "kubectl" && sub == "run":
		if cmd, ok := afterDashDash(rest); ok {
			w.remoteCommand(cmd, in, name+" run")
		}
	case sub == "exec":
		if ops := operands(dockerExecSpec.parse(rest)); len(ops) > 1 {
			w.remoteCommand(ops[1:], in, name+" exec")
		}
	case sub == "run" || sub == "create":
		parsed := dockerRunSpec.parse(rest)
		w.containerMounts(name, parsed, in)
		for _, f := range values(parsed, "--cidfile") {
			w.pathRequirements(tool.KindFilesystemWrite, f, in, name+" --cidfile")
		}
		cmd := operands(parsed)
		if len(cmd) > 0 {
			cmd = cmd[1:] // the image
		}
		if ep := values(parsed, "--entrypoint"); len(ep) > 0 {
			cmd = append([]shWord{ep[len(ep)-1]}, cmd...)
		}
		if len(cmd) > 0 {
			w.remoteCommand(cmd, in, name+" "+sub)
		}
	}
}

// composePrograms: docker compose exec SERVICE CMD and run SERVICE CMD.
func composePrograms(w *bashWalker, name string, args []shWord, in dirSet) {
	spec := optSpec{short: "fp", long: []string{"file", "project-name", "profile", "env-file", "project-directory", "ansi", "progress"}, inOrder: true}
	parsed := spec.parse(args)
	ops := operands(parsed)
	if len(ops) < 3 {
		return
	}
	sub, _ := ops[0].literal()
	if sub != "exec" && sub != "run" {
		return
	}
	inner := optSpec{short: "euwv", inOrder: true, long: []string{"env", "user", "workdir", "volume", "entrypoint", "name", "label", "publish"}}
	rest := operands(inner.parse(ops[1:]))
	if len(rest) > 1 {
		w.remoteCommand(rest[1:], in, name+" compose "+sub)
	}
}

// containerMounts adds what docker run mounts from this machine: each
// bind mount's source is written (read with ro or readonly).
func (w *bashWalker) containerMounts(name string, parsed []arg, in dirSet) {
	for _, a := range parsed {
		if !a.hasValue {
			continue
		}
		switch a.opt {
		case "-v", "--volume":
			lp := a.value.knownPrefix()
			src, opts, _ := strings.Cut(lp, ":")
			if !a.value.known() && !strings.Contains(lp, ":") {
				w.treeWrite(a.value, in, name+" "+a.opt) // source only known at run time
				continue
			}
			if !strings.HasPrefix(src, "/") && !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "~") {
				continue // a named volume
			}
			kind := tool.KindFilesystemWrite
			if parts := strings.Split(opts, ":"); len(parts) > 1 && strings.Contains(","+parts[len(parts)-1]+",", ",ro,") {
				kind = tool.KindFilesystemRead
			}
			w.mountSource(kind, a.value.slice(0), len(src), in, name+" "+a.opt)
		case "--mount":
			lp := a.value.knownPrefix()
			fields := strings.Split(lp, ",")
			bind, src, ro := false, "", false
			for _, f := range fields {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "type":
					bind = v == "bind"
				case "source", "src":
					src = v
				case "readonly", "ro":
					ro = v == "" || v == "true" || v == "1"
				}
			}
			if !a.value.known() {
				w.treeWrite(a.value, in, name+" --mount")
				continue
			}
			if bind && src != "" {
				kind := tool.KindFilesystemWrite
				if ro {
					kind = tool.KindFilesystemRead
				}
				w.mountSource(kind, literalWord(src), len(src), in, name+" --mount")
			}
		}
	}
}

// mountSource adds a Tree requirement of the first n bytes of a mount
// word: the host directory it binds.
func (w *bashWalker) mountSource(kind string, word shWord, n int, in dirSet, via string) {
	src := literalWord(word.knownPrefix()[:n])
	if kind == tool.KindFilesystemWrite {
		w.treeWrite(src, in, via)
	} else {
		w.treeRead(src, in, via)
	}
}

// remoteCommand adds a command that runs elsewhere (in a container, a
// pod): the commands it runs, as they are written, without the files it
// names.
func (w *bashWalker) remoteCommand(words []shWord, in dirSet, via string) {
	if len(words) == 0 {
		return
	}
	w.runLater(program{word: words[0], args: words[1:], via: via, remote: true}, in)
}

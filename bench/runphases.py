#!/usr/bin/env python3
"""Per-phase medians of `airlock run -- /bin/true` from perf script output
(bench/runphases.sh records it). Each phase ends at a syscall or exit the
kernel sees: a phase's time is from the previous phase's event to its own.
The events are what the code does today (stage2.go, idmap.go,
idmapholder.go, helperspawn.go, placeholders.go, guardproxy.go, helper.go); a phase whose event is
missing in a run is left out of that run. The warm helper starts beside
the supervisor's probe and plan: each phase ends at its event and starts
at the event before it in time, whichever process made it."""
import re
import statistics
import sys

AT_FDCWD = "dfd: 0xffffffffffffff9c"
LINE = re.compile(r"\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)")
PHASES = [
    ("main", "supervisor: exec → main (Go runtime, package inits)"),
    ("nsclone", "… → clone of the warm helper (flags, profile, probe)"),
    ("holder", "… → fork of the id-map holder (the rest of the probe)"),
    ("hexec", "… → exec of the stage-2 helper"),
    ("ph0", "… → first placeholder (id-map holder, plan)"),
    ("ph1", "placeholders (mkdir at the workspace top)"),
    ("hmain", "… → helper: config read (Go runtime, inits, the config)"),
    ("pivot", "helper: cgroup, mount view → pivot_root"),
    ("fan", "… → supervisor marks the deny watch"),
    ("ll", "… → Landlock"),
    ("proxyfork", "… → fork of the guard proxy"),
    ("listener", "… → notifier installed"),
    ("cmdfork", "… → fork of the command"),
    ("cmdexit", "the command runs and exits"),
    ("un0", "… → first end-of-run removal (counters, checks)"),
    ("end", "… → supervisor exit (placeholders, cgroups removed)"),
]


def runs(path):
    cur = None
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, _tid, t, name, rest = m.groups()
        pid, t, name = int(pid), float(t) * 1000, name.split(":")[-1]
        if comm == "sh" and name == "sys_enter_execve":
            if cur:
                yield helper(cur)
            cur = {"t0": t, "sup": pid, "ph": [], "un": [], "procs": {}, "vforks": []}
            continue
        if cur is None:
            continue
        if pid == cur["sup"]:
            if name == "sys_enter_close_range":
                cur.setdefault("main", t)
            elif name == "sys_enter_clone" and "0x10000011" in rest:
                # The id-map holder: a fork into a new user namespace.
                cur.setdefault("holder", t)
            elif name == "sys_enter_clone" and "0x00004111" in rest:
                # A vfork: the small id-map holder's (idmapholder.go) or
                # the helper's spawner's (helperspawn.go); told apart
                # below, by the spawner's clone3.
                cur["vforks"].append(t)
            elif name == "sys_enter_clone" and "0x7c021011" in rest:
                cur["nsclone"] = t
            elif name == "sys_enter_mkdirat" and AT_FDCWD not in rest and "cmdexit" not in cur:
                cur["ph"].append(t)
            elif name == "sys_enter_fanotify_init" and "0x00000017" in rest:
                cur["fan"] = t
            elif name == "sys_enter_unlinkat" and "cmdexit" in cur:
                cur["un"].append(t)
            elif name == "sys_enter_exit_group":
                cur["end"] = t
        else:
            # Which of the other processes is the helper is known once
            # one of them pivots (helper below): the id-map holder execs
            # beside it.
            p = cur["procs"].setdefault(pid, {"hclones": []})
            if name in ("sys_enter_execve", "sys_enter_execveat"):
                p.setdefault("hexec", t)
            elif name == "sys_enter_clone3":
                # The spawner clones the helper into its namespaces.
                cur.setdefault("nsclone", t)
            elif name == "sys_enter_close_range":
                p.setdefault("hmain", t)
            elif name == "sys_enter_pivot_root":
                p["pivot"] = t
            elif name == "sys_enter_landlock_restrict_self":
                p["ll"] = t
            elif name == "sys_enter_seccomp" and "flags: 0x00000039" in rest:
                p["listener"] = t
            elif name == "sys_enter_clone" and "0x00004111" in rest:
                p["hclones"].append(t)
        if comm == "true" and name == "sched_process_exit":
            cur["cmdexit"] = t
    if cur:
        yield helper(cur)


def helper(run):
    """Copies the events of the run's helper (the process that pivots)
    into run."""
    for p in run["procs"].values():
        if "pivot" in p and "hexec" in p:
            run.update(p)
            break
    return run


def main():
    per = {k: [] for k, _ in PHASES}
    totals = []
    for r in runs(sys.argv[1]):
        if "end" not in r or "hexec" not in r:
            continue
        if r["ph"]:
            r["ph0"], r["ph1"] = r["ph"][0], r["ph"][-1]
        vf = r["vforks"]
        if "nsclone" in r:
            # The spawner's vfork is the last before its clone3; the
            # holder's is the first of the others.
            spawner = max((t for t in vf if t < r["nsclone"]), default=None)
            vf = [t for t in vf if t != spawner]
        if vf and "holder" not in r:
            r["holder"] = vf[0]
        if len(r["hclones"]) > 1:
            r["proxyfork"] = r["hclones"][0]
        if r["hclones"]:
            r["cmdfork"] = r["hclones"][-1]
        if r["un"]:
            r["un0"] = r["un"][0]
        prev = r["t0"]
        for t, k in sorted((r[k], k) for k, _ in PHASES if k in r):
            per[k].append(t - prev)
            prev = t
        totals.append(r["end"] - r["t0"])
    if not totals:
        sys.exit("runphases.py: no complete run in the trace")
    print(f"{len(totals)} runs, median exec → exit {statistics.median(totals):.2f} ms")
    for k, label in PHASES:
        if per[k]:
            print(f"  {label:58s} {statistics.median(per[k]):6.2f} ms")


if __name__ == "__main__":
    main()

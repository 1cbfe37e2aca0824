package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/airlockhq/airlock/internal/cli"
	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/sandbox"
)

func runDoctor(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("airlock doctor", flag.ContinueOnError)
	var pf cli.ProfileFlags
	pf.Register(fs)
	asJSON := fs.Bool("json", false, "print the host facts and the Report as JSON")
	help := func(w io.Writer) {
		fmt.Fprint(w, `Usage: airlock doctor [--json] [PROFILE FLAGS]

Prints what this host can enforce (kernel, user namespaces, Landlock ABI,
seccomp, cgroup layout), then the Report of the profile the flags describe:
each guarantee with its status, mechanism and reason, and the Level
(full, partial or none). Exit status 0 when the profile can run here, 1 when
a guarantee it requires is missing.

Flags:
`)
	}
	if code, ok := cli.ParseCommandFlags(fs, args, help, exitUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "airlock doctor: takes no arguments (got %q); the profile comes from its flags\n", fs.Arg(0))
		return exitUsage
	}
	pol, err := pf.LoadChecked(fs)
	if err != nil {
		fmt.Fprintln(stderr, "airlock:", visible.Text(err.Error()))
		return exitUsage
	}
	p := pol.Profile
	rep := sandbox.ReportFor(p)
	// Cold: doctor runs nothing, so no helper is cloned for it, nor a
	// gateway started.
	var ex *sandbox.Executor
	opts, _, runErr := gatewayOptions(p, sandbox.Options{Cold: true})
	if runErr == nil {
		ex, runErr = sandbox.NewWithOptions(p, opts)
	}
	if runErr == nil {
		ex.Close()
	}
	if *asJSON {
		out := struct {
			sandbox.Report
			Profile  string                   `json:"profile_fingerprint"`
			Required []string                 `json:"required"`
			CanRun   bool                     `json:"can_run"`
			Files    []string                 `json:"profile_files"`
			Error    string                   `json:"error,omitempty"`
			Journals []sandbox.PendingJournal `json:"pending_journals,omitempty"`
		}{Report: rep, Profile: p.Fingerprint(), CanRun: runErr == nil, Files: append([]string{}, pol.ProfileFiles...), Journals: sandbox.PendingJournals()}
		for _, g := range p.Required().List() {
			out.Required = append(out.Required, g.String())
		}
		if runErr != nil {
			out.Error = runErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return 1
		}
	} else {
		h := rep.Host
		fmt.Fprintf(stdout, "host\n  kernel           %s (%s)\n  uid              %d\n", visible.Text(h.Kernel), h.Arch, h.UID)
		fmt.Fprintf(stdout, "  user namespaces  %s\n", yesNo(h.UserNamespaces, h.UserNSReason))
		landlock := fmt.Sprintf("ABI %d", h.LandlockABI)
		if h.LandlockABI == 0 {
			landlock = "unavailable"
		}
		fmt.Fprintf(stdout, "  landlock         %s\n", landlock)
		for _, f := range h.LandlockFeatures {
			state := "yes"
			if !f.Enforced {
				state = "no: " + visible.Text(f.Reason)
			}
			fmt.Fprintf(stdout, "    %-20s (ABI %d) %s\n", f.Name, f.MinABI, state)
		}
		fmt.Fprintf(stdout, "  seccomp          %s\n", yesNo(h.Seccomp, h.SeccompReason))
		for _, b := range h.SeccompBlocked {
			fmt.Fprintf(stdout, "    %s\n", visible.Text(b))
		}
		fmt.Fprintf(stdout, "  cgroups          %s, %s\n", h.CgroupMode, yesNo(h.CgroupWritable, h.CgroupReason))
		fmt.Fprintf(stdout, "profile %s (fingerprint %.12s)\n", p.Spec().Preset, p.Fingerprint())
		fmt.Fprintf(stdout, "  files            %s\n", profileFilesLine(pol.ProfileFiles))
		fmt.Fprint(stdout, rep.String())
		for _, j := range sandbox.PendingJournals() {
			state := "its check has not passed: look at the workspace before running git there, then run airlock there again or remove the journal"
			if j.Running {
				state = "its run is still going"
			}
			fmt.Fprintf(stdout, "pending run journal %s (workspace %s): %s\n", visible.Text(j.Path), visible.Text(j.Workspace), state)
		}
		if runErr != nil {
			fmt.Fprintln(stdout, "cannot run:", visible.Text(runErr.Error()))
		}
	}
	if runErr != nil {
		return 1
	}
	return 0
}

func yesNo(ok bool, why string) string {
	if ok {
		return "yes"
	}
	if why == "" {
		return "no"
	}
	return "no: " + visible.Text(why)
}

// profileFilesLine names the profile files a profile was built from.
func profileFilesLine(files []string) string {
	if len(files) == 0 {
		return "none (the preset and the flags alone)"
	}
	quoted := make([]string, len(files))
	for i, f := range files {
		quoted[i] = visible.Text(f)
	}
	return strings.Join(quoted, ", ")
}

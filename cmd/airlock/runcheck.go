package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlockhq/airlock/sandbox"
)

// reportFile is where --report writes the Result: a file opened before
// the run, or stdout for "-".
type reportFile struct {
	f   *os.File
	out io.Writer
}

func openReport(path string, stdout io.Writer) (*reportFile, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return &reportFile{out: stdout}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		dir := filepath.Dir(path)
		return nil, fmt.Errorf("--report %s: %v; choose a file in a directory you can write (%s is not), or --report - for stdout", path, errors.Unwrap(err), dir)
	}
	return &reportFile{f: f, out: f}, nil
}

// write puts res in the report with the profile files the run loaded
// (none: the preset and flags alone), so a report says where its
// profile came from.
func (r *reportFile) write(res *sandbox.Result, files []string) error {
	data, err := json.MarshalIndent(struct {
		*sandbox.Result
		ProfileFiles []string `json:"profile_files"`
	}{res, append([]string{}, files...)}, "", "  ")
	if err != nil {
		return err
	}
	if r.f != nil {
		if err := r.f.Truncate(0); err != nil {
			return err
		}
	}
	_, err = r.out.Write(append(data, '\n'))
	return err
}

func (r *reportFile) Close() {
	if r != nil && r.f != nil {
		r.f.Close()
	}
}

// warnAddressSpace says on stderr, before the run, that a memory budget
// asked for (--memory, or one below the floor the sandbox raises it to) is
// held only by RLIMIT_AS on this host; the Report says so for every run.
func warnAddressSpace(w io.Writer, rep sandbox.Report, asked bool) {
	var reason string
	for _, b := range rep.Budgets {
		if b.Budget == sandbox.BudgetMemory && b.Status == sandbox.Degraded {
			reason = b.Reason
		}
	}
	_, note, ok := strings.Cut(reason, "the memory budget ")
	if !ok || (!asked && !strings.Contains(note, "raised to")) {
		return
	}
	note, _, _ = strings.Cut(note, "; ")
	fmt.Fprintf(w, "airlock: warning: the memory budget %s (no writable cgroup here; run as root or in a delegated cgroup for a real memory limit)\n", note)
}

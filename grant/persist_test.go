package grant_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockhq/airlock/grant"
)

// TestOpenDirAcrossIssuers: two Issuers opened on one directory stand for
// the hook process and the later "airlock run" process. A token of one is
// redeemed by the other exactly once, and a replay through either fails.
func TestOpenDirAcrossIssuers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "grants")
	hook, err := grant.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := grant.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustIssue(t, hook, commandBinding(), time.Minute)
	if _, err := run.Redeem(tok, commandBinding()); err != nil {
		t.Fatalf("redeem in the other process: %v", err)
	}
	for name, i := range map[string]*grant.Issuer{"hook": hook, "run": run} {
		if _, err := i.Redeem(tok, commandBinding()); !errors.Is(err, grant.ErrReplayed) {
			t.Errorf("replay through %s: err = %v, want ErrReplayed", name, err)
		}
	}
	// A third Issuer opened later (a new process) still sees it spent.
	later, err := grant.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := later.Redeem(tok, commandBinding()); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("replay through a new Issuer: err = %v, want ErrReplayed", err)
	}
	// Positive control: another directory has another key.
	other, err := grant.OpenDir(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	tok2 := mustIssue(t, hook, commandBinding(), time.Minute)
	if _, err := other.Redeem(tok2, commandBinding()); !errors.Is(err, grant.ErrTampered) {
		t.Errorf("redeem under another directory's key: err = %v, want ErrTampered", err)
	}
}

func TestFileLedgerConcurrentSpend(t *testing.T) {
	dir := t.TempDir()
	issuer, err := grant.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustIssue(t, issuer, argvBinding(), time.Minute)
	var ok, replayed atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 40 {
		// Each goroutine opens its own Issuer and so its own lock file
		// descriptor: flock excludes them as it would processes.
		i, err := grant.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			<-start
			_, err := i.Redeem(tok, argvBinding())
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, grant.ErrReplayed):
				replayed.Add(1)
			default:
				t.Errorf("Redeem: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 39 {
		t.Fatalf("%d succeeded and %d were replays; want 1 and 39", ok.Load(), replayed.Load())
	}
}

func TestFileLedgerForgetsOnlyLongExpired(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spent")
	l := &grant.FileLedger{Path: path}
	old := time.Now().Add(-grant.ForgetAfter - time.Minute)
	// 65 records: the last of these Spends sees 64 long-expired ones,
	// not yet more than the 64 that make it rewrite.
	for i := range 65 {
		if err := l.Spend([32]byte{byte(i), 1}, old); err != nil {
			t.Fatal(err)
		}
	}
	if fi, _ := os.Stat(path); fi.Size() != 65*40 {
		t.Fatalf("ledger is %d bytes before the sweep, want 65 records", fi.Size())
	}
	// This Spend finds 65 long-expired records and rewrites the file.
	recent := time.Now().Add(-time.Minute) // expired, but not long ago
	if err := l.Spend([32]byte{9, 9, 9}, recent); err != nil {
		t.Fatal(err)
	}
	if err := l.Spend([32]byte{7, 7, 7}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 2*40 {
		t.Errorf("ledger is %d bytes after the sweep, want the 2 records not long expired (80)", fi.Size())
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("ledger mode %v, want 0600", fi.Mode().Perm())
	}
	for _, mac := range [][32]byte{{9, 9, 9}, {7, 7, 7}} {
		if err := l.Spend(mac, time.Now().Add(time.Minute)); !errors.Is(err, grant.ErrReplayed) {
			t.Errorf("spend of a kept record: err = %v, want ErrReplayed", err)
		}
	}
}

func TestFileLedgerTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spent")
	l := &grant.FileLedger{Path: path}
	exp := time.Now().Add(time.Minute)
	if err := l.Spend([32]byte{1}, exp); err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of an append leaves part of a record.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte{2}, 17))
	f.Close()
	if err := l.Spend([32]byte{3}, exp); err != nil {
		t.Fatalf("spend after a torn record: %v", err)
	}
	for _, mac := range [][32]byte{{1}, {3}} {
		if err := l.Spend(mac, exp); !errors.Is(err, grant.ErrReplayed) {
			t.Errorf("mac %x: err = %v, want ErrReplayed", mac[0], err)
		}
	}
	if fi, _ := os.Stat(path); fi.Size()%40 != 0 {
		t.Errorf("the torn record is still there: %d bytes", fi.Size())
	}
}

func TestLoadKeyFile(t *testing.T) {
	t.Run("created once, same for every caller", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "key")
		keys := make([][]byte, 20)
		var wg sync.WaitGroup
		for i := range keys {
			wg.Go(func() {
				k, err := grant.LoadKeyFile(path)
				if err != nil {
					t.Error(err)
				}
				keys[i] = k
			})
		}
		wg.Wait()
		for _, k := range keys[1:] {
			if !bytes.Equal(k, keys[0]) {
				t.Fatal("concurrent callers got different keys")
			}
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
			t.Errorf("key file mode %v size %d, want 0600 and 32", fi.Mode().Perm(), fi.Size())
		}
		left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".key-*"))
		if len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})
	for name, tc := range map[string]struct {
		setup func(path string)
		want  string
	}{
		"readable by others": {func(p string) { os.WriteFile(p, bytes.Repeat([]byte{1}, 32), 0o644) }, "can be read by others"},
		"too short":          {func(p string) { os.WriteFile(p, []byte("short"), 0o600) }, "shorter than 32"},
		"a directory":        {func(p string) { os.Mkdir(p, 0o700) }, "not a regular file"},
		"a symlink":          {func(p string) { os.Symlink("/etc/hostname", p) }, "symbolic link"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			tc.setup(path)
			_, err := grant.LoadKeyFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestOpenDirRefusesRelative(t *testing.T) {
	if _, err := grant.OpenDir("grants"); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Fatalf("err = %v", err)
	}
}

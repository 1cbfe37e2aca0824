// Command daemon is the load benchmark of airlock serve: it builds airlock,
// starts a real daemon on loopback on each database (SQLite, and
// PostgreSQL when a server is given), and drives POST /v1/decide from 1, 16
// and 64 concurrent clients, printing decisions per second and latency
// percentiles as a Markdown table (docs/BENCHMARKS.md has a run).
//
//	go run ./bench/daemon                                 # SQLite only
//	go run ./bench/daemon -postgres "$AIRLOCK_TEST_POSTGRES"  # both
//
// The allow mix asks about a Bash command a workspace rule allows, so each
// request goes through the whole gate and one durable audit append. The
// ask mix makes every tenth request a call no rule allows, each one new, so
// it opens a pending approval (an approval row, an event and an audit
// append in the database).
//
// Each level runs for -duration after -warmup, bounded by -max requests,
// and stops by itself; all traffic goes to 127.0.0.1.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/server/daemontest"
)

func main() {
	pg := flag.String("postgres", "", "a PostgreSQL `DSN` to also run on (a fresh schema is made in it and dropped after)")
	levels := flag.String("clients", "1,16,64", "concurrent client counts, comma-separated")
	mixes := flag.String("mix", "allow,ask", "request mixes: allow (every call allowed by a rule) and ask (every 10th a new call that opens an approval)")
	dur := flag.Duration("duration", 10*time.Second, "how long each level is measured")
	warm := flag.Duration("warmup", 2*time.Second, "how long each level runs before it is measured")
	maxReq := flag.Int("max", 200000, "at most this many requests per level")
	bin := flag.String("airlock", "", "run this airlock `binary` instead of building one")
	flag.Parse()
	if err := run(*bin, *pg, *levels, *mixes, *dur, *warm, *maxReq); err != nil {
		fmt.Fprintln(os.Stderr, "bench/daemon:", err)
		os.Exit(1)
	}
}

func run(bin, pgDSN, levelList, mixList string, dur, warm time.Duration, maxReq int) error {
	var levels []int
	for _, f := range strings.Split(levelList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-clients %q: want numbers like 1,16,64", levelList)
		}
		levels = append(levels, n)
	}
	mixes := strings.Split(mixList, ",")
	dir, err := os.MkdirTemp("", "airlock-bench-daemon-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if bin == "" {
		fmt.Fprintln(os.Stderr, "building airlock...")
		if bin, err = daemontest.Build(dir); err != nil {
			return err
		}
	}
	env := daemontest.Env(dir)
	ws, err := daemontest.Workspace(dir, "echo hello")
	if err != nil {
		return err
	}
	machineFacts()

	dbs := []struct{ name, dsn string }{{"SQLite", "sqlite:" + filepath.Join(dir, "airlock.db")}}
	if pgDSN != "" {
		schemaDSN, drop, err := freshSchema(pgDSN)
		if err != nil {
			return err
		}
		defer drop()
		dbs = append(dbs, struct{ name, dsn string }{"PostgreSQL", schemaDSN})
	}

	fmt.Println("| database | mix | clients | requests | decisions/s | p50 ms | p99 ms | max ms | errors | daemon CPU µs/decision |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, db := range dbs {
		token, err := daemontest.CreateToken(bin, db.dsn, env, "--role", "agent", "--agent", "bench", "--workspace", ws)
		if err != nil {
			return err
		}
		d, err := daemontest.Start(context.Background(), daemontest.Options{Bin: bin, DB: db.dsn, Env: env})
		if err != nil {
			return err
		}
		for _, mix := range mixes {
			for _, n := range levels {
				r := level(d.URL, token, ws, mix, n, dur, warm, maxReq, d.Pid())
				fmt.Printf("| %s | %s | %d | %d | %.0f | %.2f | %.2f | %.2f | %d | %.0f |\n",
					db.name, mix, n, r.count, r.rate, ms(r.p50), ms(r.p99), ms(r.max), r.errors, r.cpuPer)
			}
		}
		if err := d.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the daemon: %v\n%s", err, d.Logs())
		}
	}
	fmt.Fprintf(os.Stderr, "load average after: %s\n", loadavg())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type result struct {
	count, errors int
	rate          float64
	cpuPer        float64 // the daemon's CPU time per measured decision, µs
	p50, p99, max time.Duration
	firstErr      error
}

// level runs n clients for warm+dur and measures the last dur.
func level(base, token, ws, mix string, n int, dur, warm time.Duration, maxReq, pid int) result {
	tr := &http.Transport{MaxIdleConns: n, MaxIdleConnsPerHost: n, MaxConnsPerHost: n}
	defer tr.CloseIdleConnections()
	c := &daemontest.Client{URL: base, Token: token, HTTP: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	ctx := context.Background()
	var (
		measuring atomic.Bool
		stop      atomic.Bool
		issued    atomic.Int64
		mu        sync.Mutex
		lat       []time.Duration
		errs      int
		firstErr  error
		wg        sync.WaitGroup
	)
	run := randomHex()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := make([]time.Duration, 0, 4096)
			bad := 0
			var firstBad error
			for i := 0; !stop.Load(); i++ {
				if issued.Add(1) > int64(maxReq) {
					break
				}
				cmd := "echo hello"
				if mix == "ask" && i%10 == 9 {
					cmd = fmt.Sprintf("git push origin %s-%d-%d", run, g, i) // new each time: opens an approval
				}
				t0 := time.Now()
				d, err := c.Decide(ctx, ws, cmd, map[string]any{"agent": "bench", "session": run})
				el := time.Since(t0)
				if err == nil && d.Decision == "deny" {
					err = fmt.Errorf("denied: %s", d.Reason)
				}
				if !measuring.Load() {
					continue
				}
				if err != nil {
					bad++
					if firstBad == nil {
						firstBad = err
					}
					continue
				}
				own = append(own, el)
			}
			mu.Lock()
			lat = append(lat, own...)
			errs += bad
			if firstErr == nil {
				firstErr = firstBad
			}
			mu.Unlock()
		}()
	}
	time.Sleep(warm)
	measuring.Store(true)
	start := time.Now()
	cpu0 := cpuTime(pid)
	time.Sleep(dur)
	stop.Store(true)
	elapsed := time.Since(start)
	cpu := cpuTime(pid) - cpu0
	wg.Wait()
	if firstErr != nil {
		fmt.Fprintf(os.Stderr, "%s, %d clients: %d errors, the first: %v\n", mix, n, errs, firstErr)
	}
	slices.Sort(lat)
	r := result{count: len(lat), errors: errs, firstErr: firstErr}
	if len(lat) > 0 {
		r.rate = float64(len(lat)) / elapsed.Seconds()
		r.cpuPer = float64(cpu.Microseconds()) / float64(len(lat))
		r.p50 = lat[len(lat)/2]
		r.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
		r.max = lat[len(lat)-1]
	}
	return r
}

// freshSchema makes a schema for the run in the database dsn names and
// returns a DSN selecting it, and a function dropping it.
func freshSchema(dsn string) (string, func(), error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", nil, fmt.Errorf("connecting to -postgres: %w", err)
	}
	schema := "airlock_bench_" + randomHex()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	drop := func() {
		_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		conn.Close(ctx)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cpuTime is the user+system CPU time process pid has used, from
// /proc/PID/stat (in clock ticks of 1/100 s, USER_HZ on Linux).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// machineFacts prints what the numbers depend on, to stderr.
func machineFacts() {
	model := "?"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	fmt.Fprintf(os.Stderr, "machine: %d CPUs (%s), %s, %s; load average before: %s\n",
		runtime.NumCPU(), model, runtime.GOOS+"/"+runtime.GOARCH, runtime.Version(), loadavg())
}

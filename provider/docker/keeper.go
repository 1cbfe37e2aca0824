package docker

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/airlockhq/airlock/provider"
)

// KeeperUser is the uid:gid of a container's PID 1, the keeper. It is
// not User: no call can signal the keeper, write to its stdin or read
// its descriptors, so no call can end it early for a neighbour or keep
// it (and so the container) alive past a deadline. It runs nothing of
// the caller's and needs no file: the scratch tmpfs belongs to User.
const KeeperUser = "65533:65533"

// keeperUID is KeeperUser's uid, as this host sees it.
const keeperUID = "65533"

// keeper is PID 1 of a container whose calls run as execs. It holds
// the container's deadline. airlock keeps the container's stdin
// attached for the container's life and writes one line when a call
// starts (the seconds it may run) and one when it ended. The keeper
// exits, and the kernel ends every process of the container with it,
// when a call's line does not come in time or its stdin closes: the
// Engine closes it (StdinOnce) as soon as airlock's attach connection
// is gone, so a killed airlock leaves no work running. It waits in a
// foreground child, so as the namespace's init it reaps the orphans a
// sweep kills.
var keeper = []string{"sh", "-c", `while n=$(read -r l && echo "$l"); do
  case $n in ''|*[!0-9]*) exit 0;; esac
  (read -r -t "$n" _) || exit 0
done`}

// directWrapper is PID 1 of a direct container (the command itself
// runs in the first exec-less container): it runs argv with the
// container's stdin and ends everything after the given seconds, so
// the work stops at its deadline even when airlock is gone. The timer
// is a child a call can kill, which only ends the run early: PID 1,
// which no process of the container can kill, waits for the timer
// alone. When the timer was killed rather than ran out, the command's
// subshell is exiting (it kills the timer as its last step); PID 1 gives
// it a second to become a zombie, so that its exit status is kept, and
// then ends everything whatever it did.
func directWrapper(secs int, argv []string) []string {
	return append([]string{"sh", "-c", `n=$1; shift
exec 3<&0
sleep "$n" </dev/null >/dev/null 2>&1 & t=$!
( "$@" <&3 3<&-; s=$?; kill $t 2>/dev/null; exit $s ) & c=$!
exec 3<&-
if ! wait $t 2>/dev/null; then
  i=0
  while [ $i -lt 20 ]; do
    st=
    while read -r k v _; do [ "$k" = State: ] && { st=$v; break; }; done 2>/dev/null < /proc/$c/status
    [ "$st" = Z ] || [ -z "$st" ] && break
    sleep 0.05; i=$((i+1))
  done
fi
kill -9 -1 2>/dev/null
wait $c 2>/dev/null`, "sh", strconv.Itoa(secs)}, argv...)
}

// deadlineGrace is how long past the all-in deadline a container's own
// clock waits: airlock ends the run at the deadline and says so; the
// container's clock is for when airlock cannot.
const deadlineGrace = 5 * time.Second

// containerSeconds is the container's own bound for a call that must
// end by deadline.
func containerSeconds(deadline time.Time) int {
	if deadline.IsZero() {
		deadline = time.Now().Add(provider.DefaultTimeout)
	}
	return int(math.Ceil((time.Until(deadline) + deadlineGrace).Seconds()))
}

// callStarts tells c's keeper that a call runs until deadline.
func (c *ctr) callStarts(deadline time.Time) error {
	return c.tellKeeper(strconv.Itoa(containerSeconds(deadline)))
}

// callEnded tells c's keeper that the call ended: it waits for the next.
func (c *ctr) callEnded() error { return c.tellKeeper("end") }

func (c *ctr) tellKeeper(line string) error {
	if c.lease == nil {
		return fmt.Errorf("the container's keeper is not attached")
	}
	_ = c.lease.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.lease.Conn.Write([]byte(line + "\n"))
	return err
}

// sweep kills every process in c but its keeper and reports whether
// none is left. The keeper is PID 1, by its pid, and the child it waits
// in, which runs as KeeperUser: no process of a call can take that uid
// (no capabilities, no-new-privileges), so sparing it spares nothing of
// a call's, whatever the call names its processes. A process's state
// and uid are read from /proc/PID/status, whose lines a process cannot
// forge through its name.
func (p *Provider) sweep(c *ctr) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	x, err := p.exec(ctx, c, []string{"sh", "-c", `
round=0
while [ $round -lt 40 ]; do
  left=0
  for d in /proc/[0-9]*; do
    q=${d#/proc/}
    [ "$q" = 1 ] || [ "$q" = $$ ] && continue
    st=; uid=
    while read -r k v _; do
      case $k in State:) st=$v;; Uid:) uid=$v; break;; esac
    done < "$d/status" 2>/dev/null
    [ "$st" = Z ] || [ -z "$uid" ] && continue
    [ "$uid" = ` + keeperUID + ` ] && continue
    kill -9 "$q" 2>/dev/null && left=$((left+1))
  done
  [ $left = 0 ] && echo clean && exit 0
  # A process killed a moment ago may not be a zombie yet.
  round=$((round+1)); sleep 0.05
done
echo dirty`}, nil, 4096)
	return err == nil && !x.ended && strings.TrimSpace(string(x.stdout)) == "clean"
}

// attachKeeper attaches airlock to the stdin of c's keeper, before it
// starts; the connection is c's lease and lives as long as c.
func (p *Provider) attachKeeper(ctx context.Context, c *ctr) error {
	att, err := p.cli.ContainerAttach(ctx, c.id, client.ContainerAttachOptions{Stream: true, Stdin: true})
	if err != nil {
		return err
	}
	c.lease = &att.HijackedResponse
	return nil
}

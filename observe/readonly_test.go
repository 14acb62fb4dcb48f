package observe_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/observe"
)

// wire records every command sent on the connections it dials, as the
// server receives them (RESP arrays): a Dialer for the observer's client.
// MONITOR would not do: Redis leaves administrative commands (CONFIG)
// out of it.
type wire struct {
	mu    sync.Mutex
	conns []*recordedConn
}

type recordedConn struct {
	net.Conn
	mu   sync.Mutex
	sent bytes.Buffer
}

func (c *recordedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.sent.Write(p)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (w *wire) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	rc := &recordedConn{Conn: c}
	w.mu.Lock()
	w.conns = append(w.conns, rc)
	w.mu.Unlock()
	return rc, nil
}

// commands parses what was sent: each command's arguments.
func (w *wire) commands(t *testing.T) [][]string {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]string
	for _, c := range w.conns {
		c.mu.Lock()
		r := bufio.NewReader(bytes.NewReader(c.sent.Bytes()))
		c.mu.Unlock()
		for {
			l, err := r.ReadString('\n')
			if err == io.EOF && l == "" {
				break
			}
			var n int
			if err != nil || !strings.HasPrefix(l, "*") {
				t.Fatalf("not a RESP array: %q (%v)", l, err)
			}
			n, _ = strconv.Atoi(strings.TrimSpace(l[1:]))
			args := make([]string, n)
			for i := range n {
				h, _ := r.ReadString('\n')
				size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(h, "$")))
				if err != nil {
					t.Fatalf("not a RESP bulk string: %q", h)
				}
				b := make([]byte, size+2)
				if _, err := io.ReadFull(r, b); err != nil {
					t.Fatal(err)
				}
				args[i] = string(b[:size])
			}
			out = append(out, args)
		}
	}
	return out
}

// readOnly are the commands an observer may send: reads, and the
// connection's own set-up (go-redis's HELLO, CLIENT SETINFO, CLIENT
// MAINT_NOTIFICATIONS: they set the connection's state, nothing stored).
var readOnly = map[string]bool{"time": true, "role": true, "get": true, "pttl": true, "xread": true, "config get": true,
	"subscribe": true, "unsubscribe": true, "ping": true, "hello": true, "client setinfo": true, "client maint_notifications": true,
	"select": true, "auth": true}

func commandName(args []string) string {
	name := strings.ToLower(args[0])
	if len(args) > 1 && (name == "config" || name == "client") {
		name += " " + strings.ToLower(args[1])
	}
	return name
}

// TestWatchIsReadOnly records every command a watch sends (on the wire of
// its connections; Redis's own count of CONFIG SET calls too) while a fleet hands the
// lease over, and fails on any that is not a read: an observer pointed at
// a production Redis writes nothing there, not even its configuration.
// Keyspace notifications are used when the server has them on already
// (read with CONFIG GET); off, or CONFIG refused to the observer's user
// (ACL), it polls, and says why.
func TestWatchIsReadOnly(t *testing.T) {
	for _, tc := range []struct {
		name, flags string
		denyConfig  bool
		lane, note  string
	}{
		{name: "notifications-off", flags: "", lane: observe.LanePoll, note: "--enable-notifications"},
		{name: "notifications-partial", flags: "Ex", lane: observe.LanePoll, note: "lacks"},
		{name: "notifications-on", flags: "KEA", lane: observe.LaneNotify},
		{name: "config-denied", flags: "Kgx$", denyConfig: true, lane: observe.LanePoll, note: "CONFIG GET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := redistest.Start(t).Addr
			admin := redistest.ClientAt(t, addr)
			ctx := context.Background()
			if err := admin.ConfigSet(ctx, "notify-keyspace-events", tc.flags).Err(); err != nil {
				t.Fatal(err)
			}
			w := &wire{}
			oo := &redis.Options{Addr: addr, Dialer: w.dial}
			if tc.denyConfig {
				if err := admin.Do(ctx, "ACL", "SETUSER", "observer", "on", ">secret", "~*", "&*", "+@all", "-config").Err(); err != nil {
					t.Fatal(err)
				}
				oo.Username, oo.Password = "observer", "secret"
			}
			if err := admin.ConfigResetStat(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			obs := redis.NewClient(oo)
			defer obs.Close()
			group := "readonly"
			const ttl, wait = 300 * time.Millisecond, 100 * time.Millisecond
			wctx, cancel := context.WithCancel(ctx)
			got := make(chan *observe.Recording, 1)
			started := make(chan struct{})
			go func() {
				rec, err := observe.Watch(wctx, observe.Options{Redis: obs, Group: group, Interval: 20 * time.Millisecond,
					OnStart: func(observe.Header) { close(started) }})
				if err != nil {
					t.Error(err)
					close(started)
				}
				got <- rec
			}()
			<-started
			first := startMember(t, addr, group, ttl, wait)
			waitFor(t, 2*time.Second, "a leader", first.e.IsLeader)
			second := startMember(t, addr, group, ttl, wait)
			first.stop(t)
			waitFor(t, 2*time.Second, "the second leading", second.e.IsLeader)
			time.Sleep(3 * 20 * time.Millisecond) // a few polls of the new holder
			cancel()
			rec := <-got
			if rec == nil {
				t.Fatal("no recording")
			}

			if rec.Header.Lane != tc.lane {
				t.Errorf("lane %q, want %q (note %q)", rec.Header.Lane, tc.lane, rec.Header.LaneNote)
			}
			if tc.note != "" && !strings.Contains(rec.Header.LaneNote, tc.note) {
				t.Errorf("lane note %q: want it to say why (%q)", rec.Header.LaneNote, tc.note)
			}
			if len(rec.Entries) < 3 || len(rec.Holders) < 2 {
				t.Errorf("the watch saw %d entries, %d changes of holder: want the handover", len(rec.Entries), len(rec.Holders))
			}
			sent := map[string]int{}
			for _, args := range w.commands(t) {
				name := commandName(args)
				sent[name]++
				if !readOnly[name] {
					t.Errorf("the observer sent %q: not a read", strings.Join(args, " "))
				}
			}
			// Redis's count, whoever sent it: the test's own CONFIG SET came
			// before CONFIG RESETSTAT.
			stats, err := admin.Info(ctx, "commandstats").Result()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stats, "cmdstat_config|set:") {
				t.Errorf("Redis counted a CONFIG SET during the watch:\n%s", stats)
			}
			for _, want := range []string{"time", "get", "pttl", "xread"} {
				if sent[want] == 0 {
					t.Errorf("no %s among the observer's commands %v: the recorder missed them", want, sent)
				}
			}
			flags, err := admin.ConfigGet(ctx, "notify-keyspace-events").Result()
			if err != nil {
				t.Fatal(err)
			}
			if f := flags["notify-keyspace-events"]; !sameFlags(f, tc.flags) {
				t.Errorf("notify-keyspace-events %q after the watch, want %q as it was", f, tc.flags)
			}
			t.Logf("observer's commands: %v", sent)
		})
	}
}

// sameFlags: a and b are the same notify-keyspace-events classes, in any
// order (Redis may reorder them).
func sameFlags(a, b string) bool {
	as, bs := []byte(a), []byte(b)
	slices.Sort(as)
	slices.Sort(bs)
	return string(as) == string(bs)
}

// TestEnableNotificationsOnlyAdds: with EnableNotifications a watch adds
// the classes notify-keyspace-events lacks, keeps those set, and leaves
// them on when it ends: a second watch that started on them meanwhile
// goes on receiving notifications. (A watch that put the old value back
// at its end left the second one deaf for the rest of its watch.)
func TestEnableNotificationsOnlyAdds(t *testing.T) {
	addr := redistest.Start(t).Addr
	admin := redistest.ClientAt(t, addr)
	ctx := context.Background()
	if err := admin.ConfigSet(ctx, "notify-keyspace-events", "Ex").Err(); err != nil {
		t.Fatal(err)
	}
	group := "enable"
	type watch struct {
		file   *lockedBuffer
		cancel context.CancelFunc
		got    chan *observe.Recording
		h      observe.Header
	}
	start := func(enable bool) *watch {
		w := &watch{file: &lockedBuffer{}, got: make(chan *observe.Recording, 1)}
		var wctx context.Context
		wctx, w.cancel = context.WithCancel(ctx)
		started := make(chan struct{})
		go func() {
			rec, err := observe.Watch(wctx, observe.Options{Redis: redistest.ClientAt(t, addr), Group: group, Interval: time.Minute,
				EnableNotifications: enable, Record: observe.NewWriter(w.file),
				OnStart: func(h observe.Header) { w.h = h; close(started) }})
			if err != nil {
				t.Error(err)
				close(started)
			}
			w.got <- rec
		}()
		<-started
		return w
	}
	a := start(true)
	if a.h.Lane != observe.LaneNotify || !strings.Contains(a.h.LaneNote, "turned on by this watch") {
		t.Fatalf("lane %q, note %q: want notifications, turned on and said so", a.h.Lane, a.h.LaneNote)
	}
	b := start(false)
	if b.h.Lane != observe.LaneNotify {
		t.Fatalf("second watch: lane %q (note %q), want the notifications the first turned on", b.h.Lane, b.h.LaneNote)
	}
	a.cancel()
	<-a.got
	flags, err := admin.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		t.Fatal(err)
	}
	if f := flags["notify-keyspace-events"]; !sameFlags(f, "ExKg$") {
		t.Fatalf("notify-keyspace-events %q after the first watch: want %q, the old classes kept and the added left on", f, "ExKg$")
	}
	if err := admin.Set(ctx, election.LeaderKey(group), "someone", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the second watch notified of the key's set", func() bool {
		return strings.Contains(b.file.String(), `"holder":"someone","uncertainty"`) && strings.Contains(b.file.String(), `"note":"set"`)
	})
	b.cancel()
	<-b.got
}

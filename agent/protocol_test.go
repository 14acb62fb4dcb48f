package agent

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestParseHello(t *testing.T) {
	good := `{"type":"hello","protocol":1,"id":"a1","key":"taskrunner:leader:X","capabilities":["stop","clock"],"agent":"py"}`
	h, err := ParseHello([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != "a1" || h.Key != "taskrunner:leader:X" || !h.Has(CapClock) || h.Has(CapRunner) || h.Agent != "py" {
		t.Fatalf("parsed %+v", h)
	}
	for _, c := range []struct{ line, want string }{
		{`{"type":"promoted"}`, `must be a hello`},
		{`{"type":"hello","protocol":1,"key":"k","capabilities":[]}`, `lacks id`},
		{`{"type":"hello","protocol":1,"id":"a","capabilities":[]}`, `lacks key`},
		{`{"type":"hello","id":"a","key":"k","capabilities":[]}`, `lacks protocol`},
		{`{"type":"hello","protocol":1,"id":"a","key":"k"}`, `lacks capabilities`},
		{`{"type":"hello","protocol":2,"id":"a","key":"k","capabilities":[]}`, `protocol 2; this side speaks 1`},
		{`{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":["teleport"]}`, `unknown capability "teleport"`},
		{`{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[],"colour":"red"}`, `unknown field "colour"`},
		{`{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[]} {}`, `more than one JSON value`},
		{`hello`, `not a hello`},
	} {
		if _, err := ParseHello([]byte(c.line)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseHello(%s) = %v, want an error containing %q", c.line, err, c.want)
		}
	}
}

func TestParseEvent(t *testing.T) {
	for _, line := range []string{
		`{"type":"promoted","term":2,"token":7,"t":1}`,
		`{"type":"demoted","reason":"refused"}`,
		`{"type":"error","err":"i/o timeout"}`,
		`{"type":"chore","chore":"scheduler","n":3,"took_ns":1000}`,
		`{"type":"chore-fenced","chore":"metrics","err":"fenced"}`,
		`{"type":"task-completed","task":"1-0"}`,
		`{"type":"delayed-due","task":"x","lateness_ns":5}`,
		`{"type":"stopped"}`,
		`{"type":"reply","seq":4,"task":"x"}`,
	} {
		if _, err := ParseEvent([]byte(line)); err != nil {
			t.Errorf("ParseEvent(%s): %v", line, err)
		}
	}
	for _, c := range []struct{ line, want string }{
		{`{"type":"demoted"}`, `demoted event lacks reason`},
		{`{"type":"error"}`, `error event lacks err`},
		{`{"type":"chore"}`, `chore event lacks chore`},
		{`{"type":"chore-fenced","chore":"x"}`, `lacks err`},
		{`{"type":"task-started"}`, `lacks task`},
		{`{"type":"reply"}`, `lacks seq`},
		{`{"type":"promote"}`, `unknown event type "promote"`},
		{`{"type":"hello","protocol":1}`, `unknown field`},
		{`{}`, `no type`},
		{`{"type":"promoted","term":"2"}`, `not an event`},
	} {
		if _, err := ParseEvent([]byte(c.line)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseEvent(%s) = %v, want an error containing %q", c.line, err, c.want)
		}
	}
}

func TestParseCommand(t *testing.T) {
	for _, line := range []string{`{"cmd":"stop","seq":1}`, `{"cmd":"clock","seq":2,"rate":0.5}`, `{"cmd":"clock","seq":3,"jump_ns":-5}`, `{"cmd":"dispatch","seq":4,"task":"work","delay_ns":10}`} {
		if _, err := ParseCommand([]byte(line)); err != nil {
			t.Errorf("ParseCommand(%s): %v", line, err)
		}
	}
	for _, c := range []struct{ line, want string }{
		{`{"cmd":"stop"}`, `lacks seq`},
		{`{"cmd":"clock","seq":1}`, `exactly one of rate and jump_ns`},
		{`{"cmd":"clock","seq":1,"rate":2,"jump_ns":3}`, `exactly one`},
		{`{"cmd":"clock","seq":1,"rate":-1}`, `must be positive`},
		{`{"cmd":"dispatch","seq":1}`, `lacks task`},
		{`{"cmd":"reboot","seq":1}`, `unknown command "reboot"`},
	} {
		if _, err := ParseCommand([]byte(c.line)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCommand(%s) = %v, want an error containing %q", c.line, err, c.want)
		}
	}
}

// TestDecoderNamesAgentAndLine: a refused line is reported with the agent's
// name, the line's number and its text.
func TestDecoderNamesAgentAndLine(t *testing.T) {
	out := `{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[]}
{"type":"promoted","term":1}
{"type":"demoted"}
`
	d := NewDecoder(`instance 2 ("python3 agent.py")`, strings.NewReader(out))
	if _, err := d.Hello(); err != nil {
		t.Fatal(err)
	}
	if e, err := d.Next(); err != nil || e.Type != Promoted || e.Term != 1 {
		t.Fatalf("second line: %+v, %v", e, err)
	}
	_, err := d.Next()
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 {
		t.Fatalf("third line: %v, want a LineError at line 3", err)
	}
	want := `agent instance 2 ("python3 agent.py"), stdout line 3: demoted event lacks reason: "{\"type\":\"demoted\"}"`
	if err.Error() != want {
		t.Fatalf("error\n %s\nwant\n %s", err, want)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}

	_, err = NewDecoder("x", strings.NewReader("")).Hello()
	if !errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "agent x closed its stdout before its hello") {
		t.Fatalf("empty output: %v", err)
	}
	_, err = NewDecoder("x", strings.NewReader(`{"type":"promoted"}`+"\n")).Hello()
	if !errors.As(err, &le) || le.Line != 1 || !strings.Contains(err.Error(), "must be a hello") {
		t.Fatalf("no hello: %v", err)
	}
}

// TestDecoderChecksStamps: a t that is not the wall clock in Unix
// nanoseconds since the agent's launch (seconds, one before the launch, one
// ahead of now by more than MaxStampAhead) is a protocol error naming the
// agent and the line; a t within them, or none, is read. The decoder's
// clock is fixed so the 0.5 s boundary is tested exactly.
func TestDecoderChecksStamps(t *testing.T) {
	now := time.Now()
	launched := now.Add(-time.Minute)
	hello := `{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[]}` + "\n"
	for _, c := range []struct {
		name string
		t    int64
		ok   bool
	}{
		{"none", 0, true},
		{"since the launch", launched.Add(time.Second).UnixNano(), true},
		{"seconds", launched.Unix(), false},
		{"before the launch", launched.Add(-time.Second).UnixNano(), false},
		{"ahead of now", now.Add(time.Hour).UnixNano(), false},
		{"0.4 s ahead of now", now.Add(400 * time.Millisecond).UnixNano(), true}, // a step of the clock between two reads
		{"0.6 s ahead of now", now.Add(600 * time.Millisecond).UnixNano(), false},
	} {
		d := NewDecoder("instance 1", strings.NewReader(hello+fmt.Sprintf(`{"type":"promoted","term":1,"t":%d}`, c.t)+"\n"))
		d.CheckStamps(launched)
		d.now = func() time.Time { return now }
		if _, err := d.Hello(); err != nil {
			t.Fatal(err)
		}
		_, err := d.Next()
		var le *LineError
		if c.ok && err != nil {
			t.Errorf("%s: %v, want it read", c.name, err)
		}
		if !c.ok && (!errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "agent instance 1, stdout line 2: t ")) {
			t.Errorf("%s: %v, want a LineError naming instance 1 and line 2", c.name, err)
		}
	}
	d := NewDecoder("x", strings.NewReader(`{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[],"t":5}`+"\n"))
	d.CheckStamps(launched)
	if _, err := d.Hello(); err == nil || !strings.Contains(err.Error(), "stdout line 1: t 5 ") {
		t.Errorf("hello with t 5: %v, want it refused", err)
	}
}

const testHello = `{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[]}` + "\n"

// decodeAll reads a hello and every event of out, returning the events
// read and the first error (nil at EOF).
func decodeAll(out string) ([]Event, error) {
	d := NewDecoder("x", strings.NewReader(testHello+out))
	if _, err := d.Hello(); err != nil {
		return nil, err
	}
	var es []Event
	for {
		e, err := d.Next()
		if err == io.EOF {
			return es, nil
		}
		if err != nil {
			return es, err
		}
		es = append(es, e)
	}
}

// TestDecoderChecksOrder: a demotion before any promotion, or a second
// demotion after one, is refused naming its line; promoted, demoted,
// promoted, demoted is not. Before, both were accepted silently.
func TestDecoderChecksOrder(t *testing.T) {
	p, d := `{"type":"promoted","term":1}`+"\n", `{"type":"demoted","reason":"lost"}`+"\n"
	if es, err := decodeAll(p + d + p + d); err != nil || len(es) != 4 {
		t.Fatalf("%d events, %v: want 4, no error", len(es), err)
	}
	for _, c := range []struct {
		out  string
		line int
	}{{d, 2}, {p + d + d, 4}} {
		_, err := decodeAll(c.out)
		var le *LineError
		if !errors.As(err, &le) || le.Line != c.line || !strings.Contains(err.Error(), "demoted before promoted") {
			t.Errorf("%q: %v, want line %d's demotion before promotion", c.out, err, c.line)
		}
	}
}

// TestDecoderCutLine: a last line without a newline that does not parse
// is ErrCutLine (what a kill mid-write leaves); one that parses is an
// event; a malformed line with its newline is not ErrCutLine.
func TestDecoderCutLine(t *testing.T) {
	_, err := decodeAll(`{"type":"error","err":"x"}` + "\n" + `{"type":"error","er`)
	if !errors.Is(err, ErrCutLine) || !strings.Contains(err.Error(), "stdout line 3") {
		t.Errorf("cut line: %v, want ErrCutLine at line 3", err)
	}
	if es, err := decodeAll(`{"type":"error","err":"x"}`); err != nil || len(es) != 1 {
		t.Errorf("a whole last line without a newline: %d events, %v", len(es), err)
	}
	if _, err := decodeAll(`{"type":"error","er` + "\n"); err == nil || errors.Is(err, ErrCutLine) {
		t.Errorf("a malformed line with its newline: %v, want an error, not ErrCutLine", err)
	}
}

func TestParseHelloClient(t *testing.T) {
	const head = `{"type":"hello","protocol":1,"id":"a","key":"k","capabilities":[],"client":`
	h, err := ParseHello([]byte(head + `{"library":"redis-py 4.3.4","read_timeout_ms":2500.5,"retries":1,"retry_on_timeout":true,"retry_backoff_ms":10}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c := h.Client; c == nil || c.Library != "redis-py 4.3.4" || c.ReadTimeout() != 2500500*time.Microsecond || c.Retries != 1 || !c.RetryOnTimeout || c.IsGoRedis() {
		t.Fatalf("client %+v", h.Client)
	}
	if h, err := ParseHello([]byte(head + `{"library":"node-redis 4.5","read_timeout_ms":0,"retries":0,"queues_while_disconnected":true}}`)); err != nil || h.Client.ReadTimeout() != 0 {
		t.Fatalf("a client with no timeout: %+v, %v", h.Client, err)
	}
	for _, c := range []struct{ client, want string }{
		{`{"read_timeout_ms":5000,"retries":0}`, `lacks library`},
		{`{"library":"x","retries":0}`, `lacks read_timeout_ms (0 if the client waits for a reply for ever)`},
		{`{"library":"x","read_timeout_ms":-1,"retries":0}`, `read_timeout_ms -1 is negative`},
		{`{"library":"x","read_timeout_ms":1,"retries":-1}`, `retries -1: want 0 (none) to 100`},
		{`{"library":"go-redis 9.23.0","read_timeout_ms":1,"retries":3,"retry_backoff_ms":10}`, `retry_backoff_ms is go-redis's own`},
		{`{"library":"Go-Redis v9","read_timeout_ms":1,"retries":3,"queues_while_disconnected":true}`, `queues_while_disconnected is go-redis's own`},
		{`{"library":"x","read_timeout_ms":1,"retries":0,"pool_size":3}`, `pool_size is go-redis's option`},
		{`{"library":"x","read_timeout_ms":1,"retries":0,"timeout":3}`, `unknown field "timeout"`},
	} {
		if _, err := ParseHello([]byte(head + c.client + `}`)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("client %s: %v, want an error containing %q", c.client, err, c.want)
		}
	}
}

func TestGoRedisClient(t *testing.T) {
	for _, c := range []struct {
		o           redis.Options
		op          time.Duration
		readMS      float64
		retries     int
		opMS        float64
		ctxDeadline bool
	}{
		{redis.Options{}, 0, 5000, 3, 0, false},
		{redis.Options{ReadTimeout: -1, MaxRetries: -1}, 0, 0, 0, 0, false},
		{redis.Options{ReadTimeout: -2, MaxRetries: 1, ContextTimeoutEnabled: true}, 300 * time.Millisecond, 0, 1, 300, true},
		{redis.Options{ReadTimeout: 1500 * time.Microsecond, MaxRetries: 7}, 0, 1.5, 7, 0, false},
	} {
		got := GoRedisClient(&c.o, c.op)
		if !got.IsGoRedis() || *got.ReadTimeoutMS != c.readMS || got.Retries != c.retries || got.OpTimeoutMS != c.opMS || got.ContextTimeoutEnabled != c.ctxDeadline {
			t.Errorf("GoRedisClient(%+v, %v) = %+v (read %v ms)", c.o, c.op, got, *got.ReadTimeoutMS)
		}
		if err := got.check(); err != nil {
			t.Errorf("GoRedisClient(%+v): %v", c.o, err)
		}
	}
}

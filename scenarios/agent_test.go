package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAgent(t *testing.T) {
	src := `name: mine
backend: process
agent:
  command: [/usr/bin/python3, agent.py, --fast]
  env: {LOG: debug, N: 3}
`
	sc, err := Parse("mine.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Backend != "process" || sc.Agent == nil || !reflect.DeepEqual(sc.Agent.Command, []string{"/usr/bin/python3", "agent.py", "--fast"}) ||
		!reflect.DeepEqual(sc.Agent.Env, map[string]string{"LOG": "debug", "N": "3"}) {
		t.Fatalf("parsed backend %q agent %+v", sc.Backend, sc.Agent)
	}
	out, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("mine.yaml", out)
	if err != nil || !reflect.DeepEqual(back.Agent, sc.Agent) || back.Backend != sc.Backend {
		t.Fatalf("round trip: %+v, %v\n%s", back.Agent, err, out)
	}

	for _, c := range []struct{ src, want string }{
		{"name: x\nbackend: procss\n", `mine.yaml:2: backend: unknown backend "procss"`},
		{"name: x\nagent:\n  command: python3\n", `mine.yaml:3: agent.command: want a non-empty list`},
		{"name: x\nagent:\n  env: {A: b}\n", `mine.yaml:3: agent.command: missing`},
		{"name: x\nagent:\n  command: [a]\n  comand: [b]\n", `mine.yaml:4:`},
		{"name: x\nbackend: virtual\nagent:\n  command: [a]\n", `mine.yaml:3: agent: an agent runs on the process backend`},
	} {
		_, err := Parse("mine.yaml", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q", c.src, err, c.want)
		}
	}
}

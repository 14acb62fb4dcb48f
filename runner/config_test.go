package runner

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	noop := func(context.Context, []byte) error { return nil }
	c, err := Options{Group: "g", Tasks: map[string]Task{"a": {Handler: noop}, "b": {Handler: noop, MaxRetries: -1, Timeout: time.Minute}}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Tasks["a"]; a.MaxRetries != 3 || a.Timeout != 30*time.Second {
		t.Errorf("task a: %+v; want MaxRetries 3, Timeout 30s", a)
	}
	if b := c.Tasks["b"]; b.MaxRetries != 0 {
		t.Errorf("task b: MaxRetries %d; want 0", b.MaxRetries)
	}
	e := c.Election
	if e.TTL != 5*time.Second || e.Wait != 6*time.Second || e.JitterMS != 5 || e.Key != "g" || e.Clock == nil {
		t.Errorf("election opts %+v; want the spec's TTL 5s, Wait 6s, JitterMS 5, Key g, a clock", e)
	}
	if c.Workers != 8 || c.MinWorkers != 8 || c.MaxWorkers != 32 || c.ClaimIdle != 2*time.Minute || c.ChoreInterval != time.Second {
		t.Errorf("defaults %+v", c)
	}

	for _, bad := range []struct {
		c    Options
		want string
	}{
		{Options{Tasks: map[string]Task{"a": {Handler: noop}}}, "Group"},
		{Options{Group: "g"}, "Tasks"},
		{Options{Group: "g", Tasks: map[string]Task{"a": {}}}, "no Handler"},
		{Options{Group: "g", Tasks: map[string]Task{"a": {Handler: noop, Timeout: time.Second}}, ClaimIdle: time.Second}, "ClaimIdle"},
		{Options{Group: "g", Tasks: map[string]Task{"a": {Handler: noop}}, MinWorkers: 5, MaxWorkers: 2}, "MinWorkers"},
		{Options{Group: "g", Tasks: map[string]Task{"a": {Handler: noop}}, Block: time.Microsecond}, "Block"},
	} {
		if _, err := bad.c.withDefaults(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("withDefaults(%+v) = %v; want an error about %s", bad.c, err, bad.want)
		}
	}
}

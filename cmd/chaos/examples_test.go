package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// buildChaos builds the CLI into a temporary directory, as go install would.
func buildChaos(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/chaos: %v\n%s", err, out)
	}
	return bin
}

// k8sContainer is the part of a pod's container the examples use.
type k8sContainer struct {
	Name         string
	Command      []string
	Args         []string
	VolumeMounts []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// k8sObject is the part of a manifest's objects the examples use.
type k8sObject struct {
	Kind     string
	Metadata struct{ Name string }
	Data     map[string]string
	Spec     struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int
		Parallelism    int
		Template       struct {
			Spec struct {
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer
			}
		}
	}
}

func readManifest(t *testing.T, path string) []k8sObject {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var objs []k8sObject
	for dec := yaml.NewDecoder(f); ; {
		var o k8sObject
		if err := dec.Decode(&o); err != nil {
			if err.Error() == "EOF" {
				return objs
			}
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, o)
	}
}

// localScript is a container's shell script with its volumes mapped to
// local directories, and chaos installed where the install step puts it.
func localScript(t *testing.T, c k8sContainer, dirs map[string]string) string {
	t.Helper()
	if len(c.Command) != 2 || c.Command[0] != "sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("container %s: command %v args %v, want sh -c SCRIPT", c.Name, c.Command, c.Args)
	}
	local := map[string]string{}
	var alts []string
	for _, m := range c.VolumeMounts {
		dir, ok := dirs[m.Name]
		if !ok {
			t.Fatalf("container %s mounts %s, which the test does not provide", c.Name, m.Name)
		}
		local[m.MountPath] = dir
		alts = append(alts, regexp.QuoteMeta(m.MountPath))
	}
	// A mount path is a whole path element ("/sweep" in "/sweep/sweep.yaml",
	// once), and one pass: a local directory may contain a mount path.
	re := regexp.MustCompile(`(` + strings.Join(alts, "|") + `)(/|\s|"|$)`)
	return re.ReplaceAllStringFunc(c.Args[0], func(m string) string {
		sub := re.FindStringSubmatch(m)
		return local[sub[1]] + sub[2]
	})
}

func checkInstall(t *testing.T, o k8sObject) {
	t.Helper()
	ic := o.Spec.Template.Spec.InitContainers
	if len(ic) != 1 || !strings.Contains(strings.Join(ic[0].Command, " "), "GOBIN=/tools go install github.com/leaselab/leaselab/cmd/chaos@") {
		t.Errorf("job %s: init containers %+v, want chaos installed into /tools", o.Metadata.Name, ic)
	}
}

// TestKubernetesShardedSweep runs the Indexed Job of
// examples/ci/kubernetes/sweep.yaml as its pods would: the same shell
// command, once per completion index, as separate processes at once; then
// merge.yaml's command. The merged result is byte for byte the unsharded
// sweep's.
func TestKubernetesShardedSweep(t *testing.T) {
	objs := readManifest(t, "../../examples/ci/kubernetes/sweep.yaml")
	merge := readManifest(t, "../../examples/ci/kubernetes/merge.yaml")
	var cm, job *k8sObject
	for i := range objs {
		switch objs[i].Kind {
		case "ConfigMap":
			cm = &objs[i]
		case "Job":
			job = &objs[i]
		}
	}
	if cm == nil || job == nil || len(merge) != 1 || merge[0].Kind != "Job" {
		t.Fatalf("want a ConfigMap and a Job in sweep.yaml and a Job in merge.yaml")
	}
	n := job.Spec.Completions
	if job.Spec.CompletionMode != "Indexed" || n < 2 || job.Spec.Parallelism != n {
		t.Fatalf("job: completionMode %q, completions %d, parallelism %d; want Indexed, n ≥ 2 shards all at once",
			job.Spec.CompletionMode, n, job.Spec.Parallelism)
	}
	checkInstall(t, *job)
	checkInstall(t, merge[0])

	bin := buildChaos(t)
	root := t.TempDir()
	dirs := map[string]string{"tools": filepath.Dir(bin), "sweep": filepath.Join(root, "sweep"), "results": filepath.Join(root, "results")}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range cm.Data {
		if err := os.WriteFile(filepath.Join(dirs["sweep"], name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	containers := job.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("%d containers in the sweep job, want 1", len(containers))
	}
	script := localScript(t, containers[0], dirs)
	shard := regexp.MustCompile(`--shard "?\$JOB_COMPLETION_INDEX/(\d+)"?`)
	m := shard.FindStringSubmatch(script)
	if m == nil || m[1] != strconv.Itoa(n) {
		t.Fatalf("the sweep command %q must shard by $JOB_COMPLETION_INDEX/%d (completions)", containers[0].Args[0], n)
	}

	var wg sync.WaitGroup
	outs := make([][]byte, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX="+strconv.Itoa(i))
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	mergeScript := localScript(t, merge[0].Spec.Template.Spec.Containers[0], dirs)
	if out, err := exec.Command("sh", "-c", mergeScript).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}

	// The same sweep, unsharded, elsewhere.
	whole := filepath.Join(root, "whole")
	unsharded := strings.ReplaceAll(shard.ReplaceAllString(script, ""), dirs["results"], whole)
	if out, err := exec.Command("sh", "-c", unsharded).CombinedOutput(); err != nil {
		t.Fatalf("unsharded sweep: %v\n%s", err, out)
	}
	wholes, _ := filepath.Glob(filepath.Join(whole, "*", "result.json"))
	if len(wholes) != 1 {
		t.Fatalf("unsharded sweep wrote %v, want one result.json", wholes)
	}
	shards, _ := filepath.Glob(filepath.Join(dirs["results"], "*-shard-*", "result.json"))
	if len(shards) != n {
		t.Errorf("%d shard results, want %d: %v", len(shards), n, shards)
	}
	for _, f := range []string{"result.json", "cells.csv"} {
		want, err := os.ReadFile(filepath.Join(filepath.Dir(wholes[0]), f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dirs["results"], "merged", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("merged %s differs from the unsharded sweep's (%d vs %d bytes)", f, len(got), len(want))
		}
	}
}

// ciCommands are the shell lines of a CI template: GitHub's run steps,
// GitLab's before_script and script.
func ciCommands(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var lines []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(x, k)
			}
		case []any:
			for _, x := range v {
				walk(x, key)
			}
		case string:
			if key == "run" || key == "script" || key == "before_script" {
				lines = append(lines, strings.Split(strings.TrimSpace(v), "\n")...)
			}
		}
	}
	walk(doc, "")
	return lines
}

// TestCITemplates: the GitHub Actions workflow and the GitLab CI job
// install redis-server and chaos (from this module), and run chaos suite
// on ./chaos-scenarios with JUnit inside the reports they keep; their suite
// command, run here on a suite chaos init wrote, passes and leaves the
// JUnit file where the template's artifacts expect it.
func TestCITemplates(t *testing.T) {
	for _, tmpl := range []struct {
		file      string
		artifacts func(doc string) bool
	}{
		{"github-actions.yml", func(doc string) bool {
			return strings.Contains(doc, "actions/upload-artifact") && strings.Contains(doc, "path: chaos-reports") && strings.Contains(doc, "if: always()")
		}},
		{"gitlab-ci.yml", func(doc string) bool {
			return strings.Contains(doc, "- chaos-reports/") && strings.Contains(doc, "junit: chaos-reports/junit.xml") && strings.Contains(doc, "when: always")
		}},
	} {
		t.Run(tmpl.file, func(t *testing.T) {
			path := filepath.Join("../../examples/ci", tmpl.file)
			lines := ciCommands(t, path)
			has := func(re string) string {
				i := slices.IndexFunc(lines, regexp.MustCompile(re).MatchString)
				if i < 0 {
					t.Fatalf("%s: no command matching %s in %q", tmpl.file, re, lines)
				}
				return lines[i]
			}
			has(`apt-get install .*redis-server`)
			has(`^go install github\.com/leaselab/leaselab/cmd/chaos@latest$`)
			suite := strings.Fields(has(`^chaos suite \./chaos-scenarios `))
			doc, _ := os.ReadFile(path)
			if !tmpl.artifacts(string(doc)) {
				t.Errorf("%s does not keep chaos-reports/ as an artifact whatever the outcome", tmpl.file)
			}

			dir := t.TempDir()
			if code, _, errOut := chaos(t, "init", filepath.Join(dir, "chaos-scenarios"), "--ttl", "1s", "--wait", "1200ms", "--read-timeout", "500ms"); code != exitOK {
				t.Fatalf("init: exit %d\n%s", code, errOut)
			}
			t.Chdir(dir)
			// The virtual backend: TestInitIsACIGate runs such a suite on the real one.
			if code, out, errOut := chaos(t, append(suite[1:], "--backend", "virtual", "--quiet")...); code != exitOK {
				t.Fatalf("%v: exit %d\n%s\n%s", suite, code, out, errOut)
			}
			if _, err := os.Stat("chaos-reports/junit.xml"); err != nil {
				t.Errorf("the template's JUnit file is not where its artifacts look: %v", err)
			}
		})
	}
}

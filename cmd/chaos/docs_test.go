package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// The docs a newcomer reads: the README, every page under docs/ and the
// scenario format. Their links and the chaos commands they show are checked
// here, so that a renamed flag or a moved page fails CI instead of a reader.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages: %v", err)
	}
	return append([]string{"../../README.md", "../../scenarios/README.md"}, pages...)
}

var (
	fenceRE  = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```")
	inlineRE = regexp.MustCompile("`[^`\n]*`")
	linkRE   = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	headRE   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	// A chaos command as a page shows it, in a code block or inline.
	commandRE = regexp.MustCompile(`^(?:go run \./cmd/chaos|\./chaos|chaos)(?: |$)`)
)

// prose is a page without its code: links and headings inside code are not
// links and headings.
func prose(md string) string {
	md = fenceRE.ReplaceAllString(md, "")
	return inlineRE.ReplaceAllString(md, "``")
}

// anchor is GitHub's id for a heading: lower case, punctuation dropped
// (letters, digits, '-' and '_' kept), spaces turned into hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// anchors are the ids of a page's headings; a repeated heading gets -1, -2.
func anchors(md string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(md, ""), -1) {
		id := anchor(m[1])
		if n := seen[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

func TestDocsLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range docFiles(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(prose(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s: link %s leaves the repository; describe it here instead", page, target)
				continue
			}
			checked++
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := filepath.Rel(root, abs); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %s points outside the repository", page, target)
				continue
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", page, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(string(body))[frag] {
				t.Errorf("%s: link %s: no heading #%s in %s", page, target, frag, file)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d links checked: is the link pattern still right?", checked)
	}
}

// TestNoPointersOutsideRepository: a clone has no sibling directories and
// no session notes, so nothing in it may send a reader to them.
func TestNoPointersOutsideRepository(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): the link test above still covers the docs", err)
	}
	bad := regexp.MustCompile(`\.\./` + `shared|/work/` + `shared|NOTES` + `\.md|DESIGN` + `\.md`)
	for _, f := range strings.Fields(string(out)) {
		if !slices.Contains([]string{".go", ".md", ".yaml", ".yml", ".sh"}, filepath.Ext(f)) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			continue // deleted in the work tree
		}
		for i, line := range strings.Split(string(b), "\n") {
			if bad.MatchString(line) {
				t.Errorf("%s:%d points outside the repository: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// docCommand is one chaos command shown in a page.
type docCommand struct {
	where string   // page:line
	args  []string // after "chaos"
	shell bool     // in a sh block, as a reader would paste it
}

// docCommands are the chaos commands the pages show: every line of a code
// block (continuations joined, comments and "; …" dropped) and every inline
// code span that starts with chaos, go run ./cmd/chaos or ./chaos.
func docCommands(t *testing.T) []docCommand {
	t.Helper()
	var cmds []docCommand
	add := func(where, text string, shell bool) {
		text, _, _ = strings.Cut(text, " #")
		text, _, _ = strings.Cut(text, ";")
		text = strings.TrimSpace(text)
		loc := commandRE.FindStringIndex(text)
		if loc == nil {
			return
		}
		cmds = append(cmds, docCommand{where: where, args: strings.Fields(text[loc[1]:]), shell: shell})
	}
	for _, page := range docFiles(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		name := strings.TrimPrefix(page, "../../")
		lineOf := func(off int) string { return fmt.Sprintf("%s:%d", name, strings.Count(md[:off], "\n")+1) }
		for _, m := range fenceRE.FindAllStringSubmatchIndex(md, -1) {
			lang, body := md[m[2]:m[3]], md[m[4]:m[5]]
			lines := strings.Split(body, "\n")
			for i := 0; i < len(lines); i++ {
				start := i
				l := lines[i]
				for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
					i++
					l = strings.TrimSuffix(l, `\`) + " " + strings.TrimSpace(lines[i])
				}
				add(lineOf(m[4]+len(strings.Join(lines[:start], "\n"))), l, lang == "sh")
			}
		}
		stripped := fenceRE.ReplaceAllStringFunc(md, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
		for _, m := range inlineRE.FindAllStringIndex(stripped, -1) {
			add(lineOf(m[0]), strings.Trim(stripped[m[0]:m[1]], "`"), false)
		}
	}
	return cmds
}

// placeholder says whether a word stands for something the reader supplies:
// FILE, DIR, N, SHARD/result.json..., [--out DIR], $JOB_COMPLETION_INDEX/8.
func placeholder(word string) bool {
	if strings.ContainsAny(word, "[]$<>…") || strings.Contains(word, "...") || strings.Contains(word, "|") {
		return true
	}
	upper, lower := 0, 0
	for _, r := range strings.TrimSuffix(strings.TrimSuffix(word, ".json"), ".yaml") {
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r):
			lower++
		}
	}
	return upper > 0 && lower == 0 && !strings.HasPrefix(word, "-")
}

// subcommand is how many words name the command (2 for "sweep merge").
func subcommand(args []string) int {
	if len(args) >= 2 && args[0] == "sweep" && args[1] == "merge" {
		return 2
	}
	return min(1, len(args))
}

// TestDocsCommandsParse: every chaos command the pages show names a command
// and flags that exist. A command with the reader's placeholders is checked
// by its flag names against the command's --help; the others are parsed for
// real (flags and values), with --help at the end so that nothing runs.
func TestDocsCommandsParse(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) < 30 {
		t.Fatalf("only %d commands found in the docs: is the pattern still right?", len(cmds))
	}
	helps := map[string]string{}
	help := func(sub []string) string {
		key := strings.Join(sub, " ")
		if h, ok := helps[key]; ok {
			return h
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(slices.Clone(sub), "--help"), &out, &errOut)
		if code != exitOK {
			t.Fatalf("chaos %s --help: exit %d\n%s", key, code, errOut.String())
		}
		helps[key] = out.String() + errOut.String()
		return helps[key]
	}
	for _, c := range cmds {
		if len(c.args) == 0 {
			continue // "chaos" in a sentence
		}
		n := subcommand(c.args)
		sub := c.args[:n]
		h := help(sub) // fails the test for a command that does not exist
		if slices.ContainsFunc(c.args, placeholder) {
			for _, w := range c.args[n:] {
				w = strings.Trim(w, "[]")
				if !strings.HasPrefix(w, "-") || w == "-" {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).MatchString(h) {
					t.Errorf("%s: chaos %s has no flag --%s", c.where, strings.Join(sub, " "), name)
				}
			}
			continue
		}
		if !slices.ContainsFunc(c.args[n:], func(w string) bool { return strings.HasPrefix(w, "-") }) {
			continue // no flags: the command's --help above is the whole check
		}
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append(slices.Clone(c.args), "--help"), &out, &errOut); code != exitOK {
			t.Errorf("%s: chaos %s does not parse (exit %d):\n%s", c.where, strings.Join(c.args, " "), code, errOut.String())
		}
	}
}

// TestDocsCommandsRun runs, in a scratch directory, every command a page
// shows in a sh block as a reader would paste it, on the virtual backend
// (the real one takes each scenario's length in wall time; its runs are
// tested elsewhere), with the files it names made up first. Long seed
// sweeps and confirmations are cut short by flags appended after the
// command's own, which the command must still parse. Commands that need
// what a scratch directory cannot give (the reader's Redis, Docker, a
// compose stack, a user's agent on the process backend, a runner-mode
// scenario the virtual backend refuses) are parsed only, by
// TestDocsCommandsParse.
func TestDocsCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documented commands")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := docCommands(t) // before leaving the package directory
	dir := t.TempDir()
	for _, l := range []string{"scenarios", "sweep"} {
		if err := os.Symlink(filepath.Join(repo, l), filepath.Join(dir, l)); err != nil {
			t.Fatal(err)
		}
	}
	quick, err := os.ReadFile("testdata/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	named := func(name string) []byte { return append([]byte("name: "+name+"\n"), quick...) }
	files := map[string][]byte{"my.yaml": named("my"), "a.yaml": named("a"), "b.yaml": named("b"),
		"ci-scenarios/first.yaml": named("first"), "chaos-scenarios/first.yaml": named("first")}
	for f, b := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	// A stored result for "chaos report chaos-reports/leader-crash/latest/result.json".
	if code, _, errOut := chaos(t, "run", "my.yaml", "--backend", "virtual", "--out", "stored", "--quiet"); code != exitOK {
		t.Fatalf("making a stored result: exit %d\n%s", code, errOut)
	}
	if err := os.MkdirAll("chaos-reports/leader-crash", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "stored/my/latest"), "chaos-reports/leader-crash/latest"); err != nil {
		t.Fatal(err)
	}

	runnerMode := map[string]bool{}
	for _, e := range scenarios.Builtin() {
		runnerMode[e.Name] = e.Scenario.Mode == model.ModeRunner
	}
	done := map[string]bool{}
	ran := 0
	for _, c := range cmds {
		if !c.shell || len(c.args) == 0 || slices.ContainsFunc(c.args, placeholder) {
			continue
		}
		args := slices.Clone(c.args)
		// A Redis or Docker of the reader's (--redis-addr, --redis-url, a compose
		// stack, --env container), a user's agent binary (--backend process:
		// its runs are tested with the backend, against chaos agent).
		if slices.ContainsFunc(args, func(a string) bool {
			return a == "--env" || a == "--redis-addr" || a == "--redis-url" || a == "process"
		}) {
			continue
		}
		switch args[0] {
		case "run", "suite":
			if slices.ContainsFunc(args[1:], func(a string) bool { return runnerMode[a] && args[0] == "run" }) {
				continue
			}
			if args[0] == "suite" && len(positionals(args[1:])) == 0 {
				continue // the whole built-in suite: TestVirtualSuite runs it (a minute under -race)
			}
			if !slices.Contains(args, "--backend") {
				args = append(args, "--backend", "virtual")
			}
			if i := slices.Index(args, "--runs"); i >= 0 && i+1 < len(args) {
				if n, err := strconv.Atoi(args[i+1]); err == nil && n > 50 {
					args = append(args, "--runs", "50")
				}
			}
			args = append(args, "--quiet")
		case "advise":
			// A short confirming search: TestAdviseCLI checks what a full one finds.
			args = append(args, "--seeds", "2", "--budget", "200")
		case "init":
			// Each page's reader starts afresh; init refuses to overwrite.
			for _, d := range positionals(args[1:]) {
				if err := os.RemoveAll(d); err != nil {
					t.Fatal(err)
				}
			}
		}
		key := strings.Join(args, " ")
		if done[key] {
			continue
		}
		done[key] = true
		ran++
		if code, out, errOut := chaos(t, args...); code != exitOK {
			t.Errorf("%s: chaos %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.where, key, code, out, errOut)
		}
	}
	t.Logf("%d documented commands ran", ran)
	if ran < 15 {
		t.Errorf("only %d documented commands ran", ran)
	}
}

// positionals are the words of a run, suite or init command line that are not
// flags or flag values: the scenarios and directories it names.
func positionals(args []string) []string {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !strings.HasPrefix(a, "-"):
			pos = append(pos, a)
		case !strings.Contains(a, "=") && !boolFlags[strings.TrimLeft(a, "-")] && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			i++ // its value
		}
	}
	return pos
}

// boolFlags are the flags of run, suite and init that take no value.
var boolFlags = map[string]bool{"quiet": true, "v": true, "strict-claims": true, "md-inline": true, "force": true, "context-timeouts": true}

// TestDocsPathsExist: the files and packages the pages name — the ./pkg/
// of a go test, go run or go build command, and every path in code that
// starts in one of the repository's top directories or names a Go file —
// exist, so that a package moved without its page fails here.
func TestDocsPathsExist(t *testing.T) {
	top := map[string]bool{}
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			top[e.Name()] = true
		}
	}
	top[".ci"] = true
	cdRE := regexp.MustCompile(`(?m)(?:^|&&|;)\s*cd ([A-Za-z0-9_./-]+)`)
	goCmd := regexp.MustCompile(`\bgo (?:test|run|build|install|vet)\b[^\n` + "`" + `]*`)
	pathRE := regexp.MustCompile(`^\.?\.?/?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)*/?(?:\.\.\.)?$`)
	checked := 0
	for _, page := range docFiles(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		// A page may run its commands from a directory it cds into (a
		// nested module's): their paths may be from there too.
		dirs := []string{"."}
		for _, m := range cdRE.FindAllStringSubmatch(md, -1) {
			dirs = append(dirs, m[1])
		}
		var words []string
		for _, m := range goCmd.FindAllString(md, -1) {
			m, _, _ = strings.Cut(m, " #")
			m, _, _ = strings.Cut(m, ";")
			m, _, _ = strings.Cut(m, "&&")
			fields := strings.Fields(m)
			for i, w := range fields {
				if !strings.HasPrefix(w, "./") || fields[i-1] == "-o" {
					continue // not a package, or the binary's output
				}
				words = append(words, w)
				if fields[1] == "run" {
					break // the rest are the program's arguments
				}
			}
		}
		for _, span := range inlineRE.FindAllString(fenceRE.ReplaceAllString(md, ""), -1) {
			span = strings.Trim(span, "`")
			first, _, nested := strings.Cut(strings.TrimPrefix(span, "./"), "/")
			if (nested && top[first]) || strings.HasSuffix(span, ".go") {
				words = append(words, span)
			}
		}
		for _, w := range words {
			w = strings.TrimRight(w, ",;:)")
			if !pathRE.MatchString(w) || strings.Contains(w, "*") {
				continue // a glob, an example, not a path of ours
			}
			p := strings.TrimSuffix(w, "...")
			// A path from the page's directory, or from the repository's root
			// (where the commands run).
			fromCD := false
			for _, d := range dirs[1:] {
				if _, err := os.Stat(filepath.Join("../..", d, p)); err == nil {
					fromCD = true
				}
			}
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil && !fromCD {
				if _, err2 := os.Stat(filepath.Join(filepath.Dir(page), p)); err2 != nil {
					if !strings.Contains(p, "/") && strings.HasSuffix(p, ".go") && goFileExists(t, p) {
						continue // a file named by itself: it exists somewhere in the tree
					}
					t.Errorf("%s names %s, which does not exist", page, w)
				}
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d paths checked: is the pattern still right?", checked)
	}
}

// goFileExists says whether a Go file of that name is in the tree.
func goFileExists(t *testing.T, name string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir("../..", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestCLIPageMatchesTheProgram: docs/cli.md's command table names every
// command chaos has (its usage's), and the suite's sample output counts
// the built-ins there are.
func TestCLIPageMatchesTheProgram(t *testing.T) {
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	cmds := regexp.MustCompile(`(?m)^  chaos ([a-z]+)`).FindAllStringSubmatch(mainUsage, -1)
	if len(cmds) < 10 {
		t.Fatalf("only %d commands in the usage: is the pattern still right?", len(cmds))
	}
	for _, c := range cmds {
		if !strings.Contains(page, "\n| `chaos "+c[1]) {
			t.Errorf("docs/cli.md's command table has no row for chaos %s", c[1])
		}
	}
	n := len(scenarios.Builtin())
	counts := regexp.MustCompile(`(?m)^(\d+) scenarios: (\d+) passed`).FindAllStringSubmatch(page, -1)
	if len(counts) == 0 {
		t.Fatal("docs/cli.md shows no suite summary line")
	}
	for _, c := range counts {
		if c[1] != strconv.Itoa(n) || c[2] != strconv.Itoa(n) {
			t.Errorf("docs/cli.md: %q, but there are %d built-in scenarios", c[0], n)
		}
	}
}

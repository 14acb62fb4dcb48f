package version

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// pinRE matches a pinned version of leaselab as the docs and templates
// write one: go install of the module's cmd/chaos at a version, the chaos
// image at a tag, and the CI templates' LEASELAB_VERSION variable (a
// sentence's full stop after one is not part of it).
var pinRE = regexp.MustCompile(`github\.com/leaselab/leaselab/cmd/chaos@([\w+-]+(?:\.[\w+-]+)*)|leaselab/chaos:([\w+-]+(?:\.[\w+-]+)*)|LEASELAB_VERSION: *"?([\w+-]+(?:\.[\w+-]+)*)`)

// pinned is where the documentation and templates must pin a version: the
// install lines of the README and the CLI and CI pages, and the CI
// templates.
var pinned = []string{
	"README.md",
	"docs/cli.md",
	"docs/docker-ci.md",
	"examples/ci/github-actions.yml",
	"examples/ci/gitlab-ci.yml",
	"examples/ci/kubernetes/sweep.yaml",
	"examples/ci/kubernetes/merge.yaml",
}

// TestPinsAgree: Release is a semantic version, and every version of
// leaselab pinned anywhere in the repository (go install of cmd/chaos at a
// version, the chaos image at a tag, a template's LEASELAB_VERSION) is Release (ReleaseImage for the image): never
// @latest, never an older release left behind. Each file that should pin
// one does.
func TestPinsAgree(t *testing.T) {
	if !regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$`).MatchString(Release) {
		t.Fatalf("Release %q is not a release tag vMAJOR.MINOR.PATCH", Release)
	}
	root := filepath.Join("..", "..")
	found := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			return nil // not text
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range pinRE.FindAllStringSubmatch(line, -1) {
				found[rel]++
				switch {
				case m[1] != "" && m[1] != Release:
					t.Errorf("%s:%d: go install …/cmd/chaos@%s, want @%s (version.Release)", rel, i+1, m[1], Release)
				case m[2] != "" && "leaselab/chaos:"+m[2] != ReleaseImage:
					t.Errorf("%s:%d: image leaselab/chaos:%s, want %s (version.ReleaseImage)", rel, i+1, m[2], ReleaseImage)
				case m[3] != "" && m[3] != Release:
					t.Errorf("%s:%d: LEASELAB_VERSION %s, want %s (version.Release)", rel, i+1, m[3], Release)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pinned {
		if found[f] == 0 {
			t.Errorf("%s pins no version of leaselab (want go install of cmd/chaos @%s, or the image %s)", f, Release, ReleaseImage)
		}
	}
	t.Logf("pins: %v", found)
}

package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// WriteFiles writes every scenario as NAME.yaml that reads back; it
// overwrites nothing unless forced, and writes nothing when one file
// would exist or would not read back.
func TestWriteFiles(t *testing.T) {
	suite, err := Starter(StarterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "suite")
	if err := WriteFiles(dir, suite, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, sc := range suite {
		if _, err := Load(filepath.Join(dir, sc.Name+".yaml")); err != nil {
			t.Errorf("%s does not read back: %v", sc.Name, err)
		}
	}
	var exists *ExistsError
	if err := WriteFiles(dir, suite, nil, false); !errors.As(err, &exists) || exists.Path != filepath.Join(dir, suite[0].Name+".yaml") {
		t.Errorf("written twice: %v, want an ExistsError for the first file", err)
	}
	if err := WriteFiles(dir, suite, nil, true); err != nil {
		t.Errorf("forced: %v", err)
	}
	bad := []model.Scenario{suite[0], {Name: "bad", Instances: 3, Duration: time.Second, Params: model.Params{TTL: -time.Second}}}
	other := filepath.Join(t.TempDir(), "other")
	var invalid *Error
	if err := WriteFiles(other, bad, nil, false); !errors.As(err, &invalid) {
		t.Errorf("an invalid scenario: %v, want the parser's *Error", err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written for an invalid suite: %v", err)
	}
}

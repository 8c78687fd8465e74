package realcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// EnvBinDir names the directory that holds the binaries (cmd/build writes it). Without it, and
// without the per-binary variables of Binary, the tests that need the binaries skip.
const EnvBinDir = "MINIKUBELET_E2E_BIN_DIR"

// The binaries the harness runs, by the name they have in the binary directory. KwokStages is
// not a binary but kwokctl's default stages, which cmd/build writes beside kwok.
const (
	Etcd              = "etcd"
	KubeAPIServer     = "kube-apiserver"
	KubeControllerMgr = "kube-controller-manager"
	KubeScheduler     = "kube-scheduler"
	Kubemark          = "kubemark"
	Kwok              = "kwok"
	KwokStages        = "kwok-stages.yaml"
	Minikubelet       = "minikubelet"
)

// ControlPlaneBinaries are what every test against a real control plane needs.
var ControlPlaneBinaries = []string{Etcd, KubeAPIServer, KubeControllerMgr, KubeScheduler}

// Binaries maps each binary's name to its path.
type Binaries map[string]string

// EnvName is the variable that names one binary's path, overriding the binary directory:
// MINIKUBELET_E2E_KUBE_APISERVER for kube-apiserver, MINIKUBELET_E2E_KWOK_STAGES for kwok-stages.yaml.
func EnvName(name string) string {
	name = strings.TrimSuffix(name, ".yaml")
	return "MINIKUBELET_E2E_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// FindBinaries looks each name up: its own variable (EnvName) first, then the binary directory
// (EnvBinDir). It reports found=false when neither variable is set for some name, and an error
// when a path that is named does not exist.
func FindBinaries(names ...string) (b Binaries, found bool, err error) {
	b = Binaries{}
	dir := os.Getenv(EnvBinDir)
	var errs []error
	for _, name := range names {
		path := os.Getenv(EnvName(name))
		if path == "" && dir != "" {
			path = filepath.Join(dir, name)
		}
		if path == "" {
			return nil, false, nil
		}
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w (build it with `go run ./cmd/build -o DIR` in test/realcluster)", name, err))
			continue
		}
		b[name] = path
	}
	return b, true, errors.Join(errs...)
}

// RequireBinaries returns the named binaries, or skips the test when they are not given: a
// test against a real control plane runs only where someone built the binaries for it. A
// binary that is named but missing fails the test.
func RequireBinaries(t testing.TB, names ...string) Binaries {
	t.Helper()
	b, found, err := FindBinaries(names...)
	if !found {
		t.Skipf("set %s (or %s, ...) to run this test against a real control plane; see docs/benchmarks.md", EnvBinDir, EnvName(names[0]))
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

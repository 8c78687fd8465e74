package kubelet

import (
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/minikubelet/minikubelet/test/podtest"
)

// stuckDirs are pod directories whose volumes cannot be removed: every TearDown fails.
type stuckDirs struct{ PodDirs }

func (d *stuckDirs) Remove(types.UID, string) error { return errors.New("device or resource busy") }

// TestFailedTearDownIsLoggedToOptionsLogger: a volume reconstructed for a pod no source has is
// torn down, the TearDown fails, and the kubelet logs it to the logger of its options.
func TestFailedTearDownIsLoggedToOptionsLogger(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true})
	dirs := &stuckDirs{}
	gone := podtest.New("gone", podtest.UID("uid-gone"))
	if err := dirs.Add(gone, "scratch", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}); err != nil {
		t.Fatal(err)
	}
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	e.opts.World.PodDirs, e.opts.Logger = dirs, logger
	var err error
	if e.k, err = New(e.opts); err != nil {
		t.Fatalf("New() = %v", err)
	}
	e.setFile() // the only source has been seen: the reconstructed volume is not wanted
	logged := func() bool {
		for _, entry := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
			if entry.Type == ktesting.LogError && strings.Contains(entry.Err.Error(), "UnmountVolume.TearDown failed") {
				return true
			}
		}
		return false
	}
	if !e.run(10*time.Second, logged) {
		t.Errorf("no failed TearDown logged within 10s; the options' logger got:\n%s", logger.GetSink().(ktesting.Underlier).GetBuffer().String())
	}
}

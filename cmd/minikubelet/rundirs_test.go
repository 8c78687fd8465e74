package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunRestartReconstructsVolumes restarts `run` over one root directory: the first process
// mounts a static pod's emptyDir volume, which makes its directory under
// <root>/pods/<uid>/volumes/kubernetes.io~empty-dir; the pod's manifest is removed while no
// process runs; the second process finds the volume on disk (reconstructed, uncertain), tears it
// down once the sources are seen, naming the pod as the runtime's sandbox does, which removes the
// volume's directory; housekeeping removes the pod's directory at its first pass after the
// runtime stopped the orphaned pod (cleanupOrphanedPodDirs), as a restarted kubelet does with
// the volumes of a pod deleted while it was down.
func TestRunRestartReconstructsVolumes(t *testing.T) {
	t.Parallel()
	dir, root := t.TempDir(), t.TempDir()
	writeManifest(t, dir, "cache.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: cache
  uid: cache-uid
spec:
  containers:
  - name: app
    image: busybox:1.36
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes:
  - {name: scratch, emptyDir: {}}
`)
	pod := "default/cache-" + testNode
	volumeDir := filepath.Join(root, "pods", "cache-uid", "volumes", "kubernetes.io~empty-dir", "scratch")
	isVolume := func(event string) func(traceEvent) bool {
		return func(e traceEvent) bool {
			return e.Component == "volumemanager" && e.Event == event && e.Pod == pod && e.UID == "cache-uid" && e.Message == "scratch"
		}
	}

	cfg := testConfig(dir, true)
	cfg.RootDir = root
	log := newTraceLog()
	stop := runInBackground(t, cfg, log)
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	log.mustWait(t, ctx, 0, "mount of scratch", isVolume("mount"))
	log.mustWait(t, ctx, 0, "Running status of "+pod, func(e traceEvent) bool { return isRunning(e, pod) })
	if err := stop(); err != nil {
		t.Fatalf("first run() = %v, want nil", err)
	}
	if fi, err := os.Stat(volumeDir); err != nil || !fi.IsDir() {
		t.Fatalf("volume directory after the first process: %v", err)
	}

	// Deleted while no kubelet runs.
	if err := os.Remove(filepath.Join(dir, "cache.yaml")); err != nil {
		t.Fatal(err)
	}
	log = newTraceLog()
	stop = runInBackground(t, cfg, log)
	log.mustWait(t, ctx, 0, "unmount of the reconstructed scratch", isVolume("unmount"))
	if _, err := os.Stat(volumeDir); !os.IsNotExist(err) {
		t.Errorf("volume directory after the unmount: %v, want it gone", err)
	}
	// Housekeeping runs every 2s on the real clock: look until the directory is gone.
	podDir := filepath.Join(root, "pods", "cache-uid")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for _, err := os.Stat(podDir); !os.IsNotExist(err); _, err = os.Stat(podDir) {
		select {
		case <-ctx.Done():
			t.Fatalf("pod directory not removed by housekeeping: %v", err)
		case <-tick.C:
		}
	}
	if err := stop(); err != nil {
		t.Errorf("second run() = %v, want nil", err)
	}
}

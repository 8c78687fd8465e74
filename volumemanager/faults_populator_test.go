package volumemanager

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestFaultsForgottenWithAPodNeverMounted: a pod whose scripted volume never mounted leaves the
// manager through the populator alone (nothing of it is possibly mounted, so no TearDown
// follows). A disk-backed emptyDir's failed SetUp made no directory, so nothing is left for a
// restarted kubelet either: the failures the pod never used are dropped there. A Memory
// emptyDir's failed SetUp left its directory (its tmpfs mount point), which a restarted kubelet
// reconstructs and tears down: the script stays for it.
func TestFaultsForgottenWithAPodNeverMounted(t *testing.T) {
	tests := []struct {
		name   string
		medium v1.StorageMedium
		// dirLeft is whether the failed SetUps left the volume's directory.
		dirLeft bool
	}{
		{name: "disk-backed emptyDir leaves nothing", medium: v1.StorageMediumDefault},
		{name: "Memory emptyDir leaves its directory", medium: v1.StorageMediumMemory, dirLeft: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultyPod(t, true)
			f.pod = emptyDirPod("e", tc.medium)
			f.script(t, "scratch", OpSetUp, 5)
			f.script(t, "scratch", OpTearDown, 1)
			f.arrive(1050 * time.Millisecond)
			step(f.w, f.m, 2*time.Second)
			if n := f.faults.Left(f.pod.UID, "scratch", OpSetUp); n == 5 || n == 0 {
				t.Fatalf("scratch SetUp failures left at 2s = %d, want some used and some left", n)
			}
			f.terminate(2 * time.Second)
			f.w.pods = nil
			f.m.PodsChanged()
			step(f.w, f.m, 20*time.Second)
			if got := f.m.PossiblyMounted(f.pod.UID); len(got) != 0 {
				t.Fatalf("possibly mounted at 20s = %v, want nothing", got)
			}
			if got := f.dirs.HasVolumes(f.pod.UID); got != tc.dirLeft {
				t.Fatalf("volume directory left at 20s = %v, want %v", got, tc.dirLeft)
			}
			for _, op := range []Operation{OpSetUp, OpTearDown} {
				n := f.faults.Left(f.pod.UID, "scratch", op)
				if tc.dirLeft && n == 0 {
					t.Errorf("scratch %s failures left with the volume's directory = 0, want the script kept for a restarted kubelet", op)
				}
				if !tc.dirLeft && n != 0 {
					t.Errorf("scratch %s failures left for the forgotten pod = %d, want 0", op, n)
				}
			}
		})
	}
}

// emptyDirPod is a pod with one emptyDir volume, scratch, of the medium, which its container
// mounts.
func emptyDirPod(uid string, medium v1.StorageMedium) *v1.Pod {
	p := uidPod(types.UID(uid))
	p.Namespace, p.Name = "ns", "p-"+uid
	p.Spec.Containers = []v1.Container{{Name: "app", VolumeMounts: []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}}
	p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium}}}}
	return p
}

package volumemanager

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestPodDirsReaddSameUID: a pod of the same UID that mounts into a directory its predecessor's
// last unmount emptied (housekeeping keeps the directory while a pod of that UID is in the pod
// manager) is the pod the directory is reconstructed for: the pod as it was mounted for, as when
// the entry went with the last unmount.
func TestPodDirsReaddSameUID(t *testing.T) {
	var d PodDirs
	old := uidPod("u")
	old.Name = "old"
	if err := d.Add(old, "v", v1.VolumeSource{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove("u", "v"); err != nil {
		t.Fatal(err)
	}
	next := uidPod("u")
	next.Name = "new"
	if err := d.Add(next, "v", v1.VolumeSource{}); err != nil {
		t.Fatal(err)
	}
	got := d.Reconstruct()
	if len(got) != 1 || got[0].Pod.Name != "new" {
		t.Fatalf("Reconstruct() = %+v, want one pod, the one mounted for (new)", got)
	}
}

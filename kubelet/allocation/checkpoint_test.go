package allocation

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// kubeletCheckpoint is the allocated_pods_state the v1.35.4 kubelet's state checkpoint wrote for
// kubeletAllocations (two SetPodResourceInfo calls on a new checkpoint).
const kubeletCheckpoint = `{"data":"{\"entries\":{\"uid-db\":{\"ContainerResources\":{\"db\":{\"requests\":{\"memory\":\"1Gi\"}}},\"PodLevelResources\":null},\"uid-web\":{\"ContainerResources\":{\"app\":{\"limits\":{\"cpu\":\"1\"},\"requests\":{\"cpu\":\"500m\",\"memory\":\"64Mi\"}},\"side\":{}},\"PodLevelResources\":null}}}","checksum":3601720143}`

func kubeletAllocations() map[types.UID]map[string]v1.ResourceRequirements {
	q := resource.MustParse
	return map[types.UID]map[string]v1.ResourceRequirements{
		"uid-web": {
			"app":  {Requests: v1.ResourceList{v1.ResourceCPU: q("500m"), v1.ResourceMemory: q("64Mi")}, Limits: v1.ResourceList{v1.ResourceCPU: q("1")}},
			"side": {},
		},
		"uid-db": {"db": {Requests: v1.ResourceList{v1.ResourceMemory: q("1Gi")}}},
	}
}

// TestCheckpointIsTheKubelets checks that the checkpoint is byte for byte the kubelet's, its
// checksum included, and that the kubelet's reads back as the allocations it was written from.
func TestCheckpointIsTheKubelets(t *testing.T) {
	got, err := encodeCheckpoint(kubeletAllocations())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kubeletCheckpoint, string(got)); diff != "" {
		t.Errorf("encodeCheckpoint (-the kubelet's +got):\n%s", diff)
	}
	back, err := decodeCheckpoint([]byte(kubeletCheckpoint))
	if err != nil {
		t.Fatalf("decodeCheckpoint(the kubelet's) error = %v", err)
	}
	for uid, want := range kubeletAllocations() {
		if !equalAllocation(mapOf(back[uid]), want) {
			t.Errorf("decoded allocation of %s = %v, want %v", uid, back[uid], want)
		}
	}
	if len(back) != 2 {
		t.Errorf("decoded %d pods, want 2", len(back))
	}
}

func TestDecodeCheckpointRefuses(t *testing.T) {
	tests := []struct {
		name, file string
		corrupt    bool
	}{
		{"not JSON", "{", false},
		{"checksum of other data", strings.Replace(kubeletCheckpoint, `500m`, `600m`, 1), true},
		{"data not JSON", `{"data":"{","checksum":` + checksumText("{") + `}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeCheckpoint([]byte(tt.file))
			if err == nil {
				t.Fatalf("decodeCheckpoint(%s) = nil error", tt.file)
			}
			if errors.Is(err, ErrCorruptCheckpoint) != tt.corrupt {
				t.Errorf("decodeCheckpoint(%s) = %v, corrupt: want %v", tt.file, err, tt.corrupt)
			}
		})
	}
	// No file, or one without entries: no allocations.
	for _, file := range []string{"", `{"data":"{}","checksum":` + checksumText("{}") + `}`} {
		var b []byte
		if file != "" {
			b = []byte(file)
		}
		if got, err := decodeCheckpoint(b); err != nil || len(got) != 0 {
			t.Errorf("decodeCheckpoint(%q) = %v, %v, want no allocations", file, got, err)
		}
	}
}

func checksumText(data string) string { return fmt.Sprint(checksum(data)) }

// equalAllocation reports whether two allocations of a pod hold the same containers with the
// same resources.
func equalAllocation(a, b map[string]v1.ResourceRequirements) bool {
	if len(a) != len(b) {
		return false
	}
	for name, r := range a {
		if s, ok := b[name]; !ok || !sameResources(&r, &s) {
			return false
		}
	}
	return true
}

// FuzzDecodeCheckpoint: whatever the file holds, decoding it fails cleanly or gives allocations
// that encode to a checkpoint that decodes to them again.
func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add([]byte(kubeletCheckpoint))
	f.Add([]byte(`{"data":"{}","checksum":0}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		again, err := encodeCheckpoint(mapsOf(got))
		if err != nil {
			t.Fatalf("encodeCheckpoint(decoded) error = %v", err)
		}
		back, err := decodeCheckpoint(again)
		if err != nil {
			t.Fatalf("decodeCheckpoint(encoded) error = %v", err)
		}
		if len(back) != len(got) {
			t.Fatalf("round trip kept %d of %d pods", len(back), len(got))
		}
		for uid, a := range got {
			if !equalAllocation(mapOf(back[uid]), mapOf(a)) {
				t.Fatalf("round trip of %s = %v, want %v", uid, back[uid], a)
			}
		}
	})
}

// memCheckpoint is a checkpoint in memory that counts its writes, and fails them with fail.
type memCheckpoint struct {
	data   []byte
	writes int
	fail   error
}

func (c *memCheckpoint) Write(b []byte) error {
	if c.fail != nil {
		return c.fail
	}
	c.data, c.writes = append([]byte(nil), b...), c.writes+1
	return nil
}

func (c *memCheckpoint) Read() ([]byte, error) { return c.data, nil }

// TestFlush: the allocations are written once a Flush follows a change, not again while they
// stay the same, and a removed pod is left out at the next write, not written away at once.
func TestFlush(t *testing.T) {
	cp := &memCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Flush(); err != nil || cp.writes != 0 {
		t.Fatalf("Flush() with nothing allocated = %v, %d writes, want none", err, cp.writes)
	}
	web, db := pod("web", "100m"), pod("db", "200m")
	e.m.SetAllocatedResources(web)
	e.m.SetAllocatedResources(db)
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Fatalf("Flush() after two allocations = %v, %d writes, want 1", err, cp.writes)
	}
	e.m.SetAllocatedResources(web) // the same allocation again: the same bytes
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Errorf("Flush() of the same allocations = %v, %d writes, want still 1", err, cp.writes)
	}
	e.m.RemovePod(db.UID)
	if err := e.m.Flush(); err != nil || cp.writes != 1 {
		t.Errorf("Flush() after RemovePod = %v, %d writes, want still 1 (the kubelet does not write then)", err, cp.writes)
	}
	e.m.SetAllocatedResources(e.resize(web, "300m"))
	if err := e.m.Flush(); err != nil || cp.writes != 2 {
		t.Fatalf("Flush() after a new allocation = %v, %d writes, want 2", err, cp.writes)
	}
	got, err := decodeCheckpoint(cp.data)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := mapOf(got["web"])["app"].Requests[v1.ResourceCPU]; got["db"] != nil || cpu.String() != "300m" {
		t.Errorf("checkpoint after the removal and the new allocation = %v, want web at 300m only", got)
	}

	// A failed write is reported with the file's name, and not tried again before a change.
	cp.fail = errors.New("disk full")
	e.m.SetAllocatedResources(e.resize(web, "400m"))
	if err := e.m.Flush(); err == nil || !strings.Contains(err.Error(), "root/allocated_pods_state") {
		t.Errorf("Flush() with a failing write = %v, want an error naming the file", err)
	}
	cp.fail = nil
	if err := e.m.Flush(); err != nil || cp.writes != 2 {
		t.Errorf("Flush() after a failed one, nothing changed = %v, %d writes, want 2", err, cp.writes)
	}
}

// TestRestartKeepsPendingResize: a new Manager over the checkpoint has the allocations of the
// old one, so a pod whose resize was pending is admitted with its allocation; once the pods are
// added, its resize is queued and retried, and stays Deferred with the condition its status
// showed (taken in anew, transitioned at the restart), without a second event.
func TestRestartKeepsPendingResize(t *testing.T) {
	ctx := context.Background()
	cp := &memCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	web, batch := pod("web", "500m"), pod("batch", "800m")
	for _, p := range []*v1.Pod{web, batch} {
		e.pods.AddPod(p)
		e.m.SetAllocatedResources(p)
	}
	wider := e.resize(web, "1")
	e.m.HandlePodUpdate(ctx, web, wider)
	if !e.status.IsPodResizeDeferred("web") || len(e.events) != 1 {
		t.Fatalf("resize to 1 CPU beside 800m: deferred %v, events %v, want deferred and one event", e.status.IsPodResizeDeferred("web"), e.events)
	}
	if err := e.m.Flush(); err != nil {
		t.Fatal(err)
	}
	// What the API server shows of web: its pending condition.
	shown := wider.DeepCopy()
	shown.Status.Conditions = e.status.PodResizeConditions("web")
	e.pods.UpdatePod(shown)

	e.clk.Set(e.clk.Now().Add(time.Minute))
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	e.events = nil
	admitted, updated := e.m.UpdatePodFromAllocation(shown)
	if !updated || admitted.Spec.Containers[0].Resources.Requests.Cpu().String() != "500m" {
		t.Fatalf("after the restart web is admitted with %v, want its allocated 500m", admitted.Spec.Containers[0].Resources.Requests.Cpu())
	}
	// The retry finds the condition as it was taken in at this instant: nothing to sync beyond
	// the pods' own creation.
	e.m.NoteAdmitted(shown)
	e.m.NoteAdmitted(batch)
	if got := e.m.HandlePodAdditions(ctx, []*v1.Pod{shown, batch}); len(got) != 0 {
		t.Errorf("HandlePodAdditions() synced %v, want none", names(got))
	}
	if !e.m.HasPendingResizes() || !e.status.IsPodResizeDeferred("web") {
		t.Errorf("after the restart web's resize is not pending Deferred")
	}
	if len(e.events) != 0 {
		t.Errorf("the restarted kubelet recorded %v, want no second ResizeDeferred", e.events)
	}
	for _, c := range e.status.PodResizeConditions("web") {
		if c.ObservedGeneration != wider.Generation || !c.LastTransitionTime.Time.Equal(e.clk.Now()) {
			t.Errorf("%s after the restart: generation %d, transitioned %v; want %d, now", c.Type, c.ObservedGeneration, c.LastTransitionTime, wider.Generation)
		}
	}
	// A pod not noted at its admission is not queued, whatever its spec: HandlePodAdditions
	// queues what NoteAdmitted noted only. (That a finished pod is never noted is the kubelet
	// assembly's admitter's: package kubelet's TestRestartLeavesFinishedPodsUnallocated.)
	e.m.RemovePod("web") // leaves the queue at its next retry
	e.m.RetryPendingResizes(ctx)
	e.pods.RemovePod(shown)
	e.m.SetAllocatedResources(web)
	e.pods.AddPod(shown)
	if got := e.m.HandlePodAdditions(ctx, []*v1.Pod{shown}); len(got) != 0 || e.m.HasPendingResizes() {
		t.Errorf("HandlePodAdditions(a pod not admitted) synced %v, pending %v, want nothing queued", names(got), e.m.HasPendingResizes())
	}
	// A pod admitted without a resize of its own queues nothing.
	e.m.NoteAdmitted(batch)
	if got := e.m.HandlePodAdditions(ctx, []*v1.Pod{batch}); len(got) != 0 || e.m.HasPendingResizes() {
		t.Errorf("HandlePodAdditions(a pod at its allocation) synced %v", names(got))
	}
	// A noted pod is queued once: the next addition starts with none noted.
	e.m.NoteAdmitted(shown)
	e.m.HandlePodAdditions(ctx, []*v1.Pod{shown})
	if !e.m.HasPendingResizes() {
		t.Errorf("HandlePodAdditions(a noted pod with a pending resize) queued nothing")
	}
	e.m.RemovePod("web")
	e.m.RetryPendingResizes(ctx)
	if got := e.m.HandlePodAdditions(ctx, []*v1.Pod{shown}); len(got) != 0 || e.m.HasPendingResizes() {
		t.Errorf("a second HandlePodAdditions queued the pod noted for the first: synced %v", names(got))
	}
}

// TestNewCorruptCheckpoint: a checkpoint that cannot be read stops the kubelet with the kubelet's
// message, naming the file.
func TestNewCorruptCheckpoint(t *testing.T) {
	cp := &memCheckpoint{data: []byte(strings.Replace(kubeletCheckpoint, "500m", "600m", 1))}
	e := newEnv(t, "4")
	err := e.start("4", cp)
	if !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), `please drain this node and delete pod resource information checkpoint file "root/allocated_pods_state"`) {
		t.Errorf("New() over a corrupt checkpoint = %v", err)
	}
}

// TestResizeAllocatedIsWritten: a resize writes the allocations not written yet when it arrives,
// and its allocation at once; admissions wait for Flush, and a resize not allocated writes
// nothing of its own.
func TestResizeAllocatedIsWritten(t *testing.T) {
	ctx := context.Background()
	cp := &memCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	web, db := pod("web", "100m"), pod("db", "200m")
	for _, p := range []*v1.Pod{web, db} {
		e.pods.AddPod(p)
		e.m.SetAllocatedResources(p)
	}
	if cp.writes != 0 {
		t.Fatalf("admissions wrote the checkpoint %d times, want none before Flush", cp.writes)
	}
	e.m.HandlePodUpdate(ctx, web, e.resize(web, "300m"))
	if cp.writes != 2 {
		t.Fatalf("an allocated resize wrote the checkpoint %d times, want 2 (the admissions, then the resize)", cp.writes)
	}
	got, err := decodeCheckpoint(cp.data)
	if err != nil {
		t.Fatal(err)
	}
	if cpu := mapOf(got["web"])["app"].Requests[v1.ResourceCPU]; cpu.String() != "300m" || got["db"] == nil {
		t.Errorf("checkpoint after the resize = %v, want web at 300m and db", got)
	}
	e.m.HandlePodUpdate(ctx, db, e.resize(db, "5"))
	if cp.writes != 2 {
		t.Errorf("a resize that was not allocated wrote the checkpoint: %d writes, want still 2", cp.writes)
	}
}

// TestFileCheckpoint: the file reads back what was written, replaced whole, with no temporary
// file left beside it; a missing file reads as nothing.
func TestFileCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := FileCheckpoint{Path: filepath.Join(dir, "root", CheckpointFile)}
	if b, err := c.Read(); err != nil || b != nil {
		t.Fatalf("Read() of a missing file = %q, %v, want nothing", b, err)
	}
	for _, want := range []string{"a longer first version", "second"} {
		if err := c.Write([]byte(want)); err != nil {
			t.Fatal(err)
		}
		if b, err := c.Read(); err != nil || string(b) != want {
			t.Errorf("Read() = %q, %v, want %q", b, err, want)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(c.Path))
	if err != nil || len(entries) != 1 {
		t.Errorf("the root directory holds %v (%v), want the checkpoint only", entries, err)
	}
}

// TestRemoveOrphanedPods: the allocations of pods not remaining are forgotten, each change told,
// without a write of their own; the next write leaves them out.
func TestRemoveOrphanedPods(t *testing.T) {
	cp := &memCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	web, db := pod("web", "100m"), pod("db", "200m")
	e.m.SetAllocatedResources(web)
	e.m.SetAllocatedResources(db)
	if err := e.m.Flush(); err != nil {
		t.Fatal(err)
	}
	var told []types.UID
	e.m.OnChange(func(uid types.UID) { told = append(told, uid) })
	e.m.RemoveOrphanedPods(map[types.UID]bool{web.UID: true})
	if diff := cmp.Diff([]types.UID{db.UID}, told); diff != "" {
		t.Errorf("changes told (-want +got):\n%s", diff)
	}
	if _, ok := e.m.allocated[db.UID]; ok || e.m.allocated[web.UID] == nil {
		t.Errorf("allocations after RemoveOrphanedPods = %v, want web only", e.m.allocated)
	}
	if cp.writes != 1 {
		t.Errorf("RemoveOrphanedPods wrote the checkpoint: %d writes, want still 1", cp.writes)
	}
	e.m.SetAllocatedResources(e.resize(web, "300m"))
	if err := e.m.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := decodeCheckpoint(cp.data)
	if err != nil {
		t.Fatal(err)
	}
	if got[db.UID] != nil || got[web.UID] == nil {
		t.Errorf("checkpoint after the next write = %v, want web only", got)
	}
}

// TestResizeWriteFailure: a resize whose allocation the checkpoint cannot take is allocated in
// memory only: no condition changes, no event, and the pod stays queued, as in the kubelet. Its
// retry, once writes succeed, finds nothing left to allocate: the pending condition a deferral
// set is cleared, no ResizeStarted is recorded, and the pod leaves the queue.
func TestResizeWriteFailure(t *testing.T) {
	ctx := context.Background()
	cp := &memCheckpoint{}
	e := newEnv(t, "4")
	if err := e.start("4", cp); err != nil {
		t.Fatal(err)
	}
	web, db := pod("web", "100m"), pod("db", "1200m")
	for _, p := range []*v1.Pod{web, db} {
		e.pods.AddPod(p)
		e.m.SetAllocatedResources(p)
	}
	if err := e.m.Flush(); err != nil {
		t.Fatal(err)
	}
	cp.fail = errors.New("disk full")

	// A resize allocated at once.
	wide := e.resize(db, "1300m")
	if got := e.m.HandlePodUpdate(ctx, db, wide); len(got) != 0 {
		t.Errorf("HandlePodUpdate() with a failing write synced %v, want none", names(got))
	}
	for _, ev := range e.events {
		t.Errorf("event recorded although the allocation could not be checkpointed: %+v", ev)
	}
	if c := e.conditions("db"); len(c) != 0 {
		t.Errorf("conditions after a failed write = %v, want none", c)
	}
	if !e.m.HasPendingResizes() {
		t.Errorf("the resize left the queue although its allocation failed to be written")
	}
	if _, updated := e.m.UpdatePodFromAllocation(wide); updated {
		t.Errorf("the allocation of a resize whose write failed was not kept in memory")
	}
	e.m.RemovePod("db")
	e.pods.RemovePod(wide)
	e.m.RetryPendingResizes(ctx) // db leaves the queue

	// A resize deferred first, then allocated while writes fail, then retried.
	e.fit = 300
	cp.fail = nil
	wider := e.resize(web, "400m")
	e.m.HandlePodUpdate(ctx, web, wider)
	if !e.status.IsPodResizeDeferred("web") || len(e.events) != 1 {
		t.Fatalf("resize beyond the fit: deferred %v, events %v, want deferred and one event", e.status.IsPodResizeDeferred("web"), e.events)
	}
	deferred := e.conditions("web")
	e.events = nil
	e.fit = 1500
	cp.fail = errors.New("disk full")
	if got := e.m.RetryPendingResizes(ctx); len(got) != 0 {
		t.Errorf("a retry whose write failed synced %v, want none", names(got))
	}
	if diff := cmp.Diff(deferred, e.conditions("web")); diff != "" || len(e.events) != 0 || !e.m.HasPendingResizes() {
		t.Errorf("a retry whose write failed: conditions changed (-before +after):\n%s events %v, pending %v; want unchanged, none, pending",
			diff, e.events, e.m.HasPendingResizes())
	}
	cp.fail = nil
	e.clk.Set(e.clk.Now().Add(RetryDelay))
	if got := e.m.Advance(ctx); !cmp.Equal(names(got), []string{"web"}) {
		t.Errorf("the next retry synced %v, want web (its pending condition cleared)", names(got))
	}
	if c := e.conditions("web"); len(c) != 0 || len(e.events) != 0 || e.m.HasPendingResizes() {
		t.Errorf("after the next retry: conditions %v, events %v, pending %v; want none, no ResizeStarted, none",
			c, e.events, e.m.HasPendingResizes())
	}
}

// TestFileCheckpointFailedRename: a write whose rename fails (the checkpoint's name is taken by
// a directory) returns the error and leaves no temporary file behind.
func TestFileCheckpointFailedRename(t *testing.T) {
	dir := t.TempDir()
	c := FileCheckpoint{Path: filepath.Join(dir, CheckpointFile)}
	if err := os.MkdirAll(filepath.Join(c.Path, "taken"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := c.Write([]byte("data")); err == nil {
		t.Errorf("Write() over a directory = nil, want the rename's error")
	}
	if _, err := os.Stat(c.Path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file after a failed rename: %v, want it removed", err)
	}
}

package fakeruntime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// The runtime's state survives a restart of the kubelet, as a CRI runtime's does: a kubelet that
// restarts finds its sandboxes and containers running, with their IDs, start times, exit codes
// and restart counts. Checkpoint writes what the runtime holds as of the clock's instant;
// Restore gives a new Runtime that state. Only a node whose state is lost (a wiped root
// directory) starts with no containers, as a rebooted node.
//
// What is scheduled for later (a start under way, a pending exit or stop) is not kept: a
// restarted kubelet's SyncPod decides again about a container that is not running.

// checkpointVersion is the format's version; a checkpoint of another version is refused.
const checkpointVersion = 1

// checkpoint is the runtime's state as written to disk.
type checkpoint struct {
	Version       int                  `json:"version"`
	LastContainer int                  `json:"lastContainer"`
	LastSandbox   int                  `json:"lastSandbox"`
	Images        map[string]time.Time `json:"images,omitempty"`
	Pods          []checkpointPod      `json:"pods"`
}

type checkpointPod struct {
	UID        types.UID             `json:"uid"`
	Name       string                `json:"name"`
	Namespace  string                `json:"namespace"`
	Sandboxes  []checkpointSandbox   `json:"sandboxes"`
	Containers []checkpointContainer `json:"containers"`
}

type checkpointSandbox struct {
	Status kubecontainer.SandboxStatus `json:"status"`
	Seq    int                         `json:"seq"`
	IP     string                      `json:"ip,omitempty"`
}

type checkpointContainer struct {
	Status kubecontainer.ContainerStatus `json:"status"`
	Seq    int                           `json:"seq"`
}

// Checkpoint returns the runtime's state as of the clock's instant, encoded. The same state
// gives the same bytes. It is AppendCheckpoint into a buffer of its own, for a caller that
// keeps the bytes.
func (r *Runtime) Checkpoint() ([]byte, error) {
	var buf bytes.Buffer
	if _, err := r.AppendCheckpoint(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// AppendCheckpoint appends Checkpoint's bytes to buf and returns the StateVersion of the state
// it encoded, both read at one instant: a caller that read them apart on a moving clock could
// count as saved an effect that fell due between the two reads and is not in the bytes. A
// caller that writes the checkpoint out and keeps no copy of it (the kubelet's keeper, once a
// second while the pods start) can hand the same buffer to every call instead of taking a new
// slice each time. On an error buf holds whatever was appended before it.
func (r *Runtime) AppendCheckpoint(buf *bytes.Buffer) (uint64, error) {
	now := r.clock.Now()
	r.applyDue(now)
	version := r.state
	// json.Marshal of the whole checkpoint writes its pods' list as "[", each pod's encoding
	// joined by ",", and "]"; so the checkpoint is written here with an empty list, whose "]}"
	// is then replaced by the pods, each encoded from one record reused from pod to pod rather
	// than from a list of copies of every status. An Encoder writes Marshal's bytes (escaped
	// alike) and a newline, which is dropped; unlike Marshal it copies nothing out of its pooled
	// state but into buf.
	// A pull still waiting in the kubelet's puller never reached the runtime: a restarted
	// process does not find it under way (AttachKubelet).
	cp := checkpoint{Version: checkpointVersion, LastContainer: r.lastContainer, LastSandbox: r.lastSandbox,
		Images: r.sentImages(now), Pods: []checkpointPod{}}
	enc := json.NewEncoder(buf)
	start := buf.Len()
	if err := enc.Encode(cp); err != nil {
		return version, fmt.Errorf("checkpoint runtime: %w", err)
	}
	if err := openPodsList(buf, start); err != nil {
		return version, fmt.Errorf("checkpoint runtime: %w", err)
	}
	// Empty lists, not nil ones, which Marshal writes as null.
	cpod := checkpointPod{Sandboxes: []checkpointSandbox{}, Containers: []checkpointContainer{}}
	for i, uid := range slices.Sorted(maps.Keys(r.pods)) {
		p := r.pods[uid]
		cpod.UID, cpod.Name, cpod.Namespace = p.uid, p.name, p.namespace
		cpod.Sandboxes, cpod.Containers = cpod.Sandboxes[:0], cpod.Containers[:0]
		for _, s := range p.sandboxes {
			cpod.Sandboxes = append(cpod.Sandboxes, checkpointSandbox{Status: s.status, Seq: s.seq, IP: s.ip})
		}
		for _, c := range p.containers {
			cpod.Containers = append(cpod.Containers, checkpointContainer{Status: c.status, Seq: c.seq})
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(&cpod); err != nil {
			return version, fmt.Errorf("checkpoint runtime: pod %s: %w", uid, err)
		}
		buf.Truncate(buf.Len() - 1) // the newline
	}
	buf.WriteString("]}")
	return version, nil
}

// errPodsNotLast is openPodsList's error: the checkpoint's encoding does not end in its empty
// list of pods, so the pods cannot be spliced in where it ends.
var errPodsNotLast = errors.New("the encoding does not end in an empty list of pods")

// openPodsList cuts the "]}\n" that ends the encoding, from start, of a checkpoint with an
// empty list of pods, leaving the list open for the pods. Cutting blindly would write a damaged
// file, silently, if a field came after Pods or Pods were left out when empty: such an
// encoding is refused, with its bytes.
func openPodsList(buf *bytes.Buffer, start int) error {
	const tail = `"pods":[]}` + "\n"
	if encoded := buf.Bytes()[start:]; !bytes.HasSuffix(encoded, []byte(tail)) {
		return fmt.Errorf("encoded %s: %w", bytes.TrimSuffix(encoded, []byte("\n")), errPodsNotLast)
	}
	buf.Truncate(buf.Len() - len("]}\n"))
	return nil
}

// Restore replaces the state of a Runtime that holds no pods with the checkpoint data. A
// checkpoint that does not decode, is of another version, or contradicts itself (an ID twice, a
// counter below an ID it handed out) is refused whole, with an error naming the reason, and the
// Runtime is left empty.
func (r *Runtime) Restore(data []byte) error {
	if len(r.pods) > 0 {
		return errors.New("restore runtime: the runtime already has pods")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cp checkpoint
	if err := dec.Decode(&cp); err != nil {
		return fmt.Errorf("restore runtime: decode checkpoint: %w", err)
	}
	if cp.Version != checkpointVersion {
		return fmt.Errorf("restore runtime: checkpoint version %d, want %d", cp.Version, checkpointVersion)
	}
	pods, containers, err := restoredRecords(cp)
	if err != nil {
		return fmt.Errorf("restore runtime: %w", err)
	}
	r.pods, r.containers, r.uids = pods, containers, nil
	r.changed()
	r.lastContainer, r.lastSandbox = cp.LastContainer, cp.LastSandbox
	for image, at := range cp.Images {
		r.images[image] = at
	}
	return nil
}

// restoredRecords checks a decoded checkpoint and builds the runtime's records from it.
func restoredRecords(cp checkpoint) (map[types.UID]*podRec, map[string]*containerRec, error) {
	pods := map[types.UID]*podRec{}
	containers := map[string]*containerRec{}
	sandboxes := map[string]bool{}
	refs := map[string]string{} // per image, the reference its instances share
	for _, cpod := range cp.Pods {
		if cpod.UID == "" {
			return nil, nil, fmt.Errorf("pod %s/%s has no UID", cpod.Namespace, cpod.Name)
		}
		if pods[cpod.UID] != nil {
			return nil, nil, fmt.Errorf("pod UID %s appears twice", cpod.UID)
		}
		p := &podRec{uid: cpod.UID, name: cpod.Name, namespace: cpod.Namespace}
		for _, s := range cpod.Sandboxes {
			if s.Status.ID == "" || sandboxes[s.Status.ID] {
				return nil, nil, fmt.Errorf("pod %s: sandbox ID %q empty or twice", cpod.UID, s.Status.ID)
			}
			if s.Seq < 1 || s.Seq > cp.LastSandbox {
				return nil, nil, fmt.Errorf("pod %s: sandbox %s numbered %d, outside 1..%d", cpod.UID, s.Status.ID, s.Seq, cp.LastSandbox)
			}
			sandboxes[s.Status.ID] = true
			p.addSandbox(sandboxRec{status: s.Status, seq: s.Seq, ip: s.IP})
		}
		for _, c := range cpod.Containers {
			if c.Status.ID == "" || containers[c.Status.ID] != nil {
				return nil, nil, fmt.Errorf("pod %s: container ID %q empty or twice", cpod.UID, c.Status.ID)
			}
			if c.Seq < 1 || c.Seq > cp.LastContainer {
				return nil, nil, fmt.Errorf("pod %s: container %s numbered %d, outside 1..%d", cpod.UID, c.Status.ID, c.Seq, cp.LastContainer)
			}
			rec := &containerRec{status: c.Status, seq: c.Seq, podUID: cpod.UID}
			// Not checkpointed: the image gives it.
			ref, ok := refs[rec.status.Image]
			if !ok {
				ref = imageRef(rec.status.Image)
				refs[rec.status.Image] = ref
			}
			rec.status.ImageRef = ref
			containers[c.Status.ID] = rec
			p.addContainer(rec)
		}
		pods[cpod.UID] = p
	}
	return pods, containers, nil
}

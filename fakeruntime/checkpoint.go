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
// gives the same bytes.
func (r *Runtime) Checkpoint() ([]byte, error) {
	data, _, err := r.VersionedCheckpoint()
	return data, err
}

// VersionedCheckpoint is Checkpoint with the StateVersion of the state it encoded, both read at
// one instant: a caller that read them apart on a moving clock could count as saved an effect
// that fell due between the two reads and is not in the bytes.
func (r *Runtime) VersionedCheckpoint() ([]byte, uint64, error) {
	now := r.clock.Now()
	r.applyDue(now)
	version := r.state
	// A pull still waiting in the kubelet's puller never reached the runtime: a restarted
	// process does not find it under way (AttachKubelet).
	cp := checkpoint{Version: checkpointVersion, LastContainer: r.lastContainer, LastSandbox: r.lastSandbox,
		Images: r.sentImages(now), Pods: []checkpointPod{}}
	for _, uid := range slices.Sorted(maps.Keys(r.pods)) {
		p := r.pods[uid]
		cpod := checkpointPod{UID: p.uid, Name: p.name, Namespace: p.namespace,
			Sandboxes: []checkpointSandbox{}, Containers: []checkpointContainer{}}
		for _, s := range p.sandboxes {
			cpod.Sandboxes = append(cpod.Sandboxes, checkpointSandbox{Status: s.status, Seq: s.seq, IP: s.ip})
		}
		for _, c := range p.containers {
			cpod.Containers = append(cpod.Containers, checkpointContainer{Status: c.status, Seq: c.seq})
		}
		cp.Pods = append(cp.Pods, cpod)
	}
	data, err := json.Marshal(cp)
	if err != nil {
		return nil, version, fmt.Errorf("checkpoint runtime: %w", err)
	}
	return data, version, nil
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
			containers[c.Status.ID] = rec
			p.addContainer(rec)
		}
		pods[cpod.UID] = p
	}
	return pods, containers, nil
}

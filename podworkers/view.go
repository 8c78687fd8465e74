package podworkers

import (
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// View is one pod worker as a reader sees it: what the kubelet's podSyncStatuses entry and its
// podUpdates channel hold for the UID. It is a copy; changing it changes nothing.
type View struct {
	UID types.UID
	// Pod is the pod's "namespace/name".
	Pod   string
	State State
	// Pending is the type of the update waiting for the worker to take it (the kubelet's
	// pendingUpdate), "" when none waits.
	Pending string
	// Sync names the sync function of the update the worker took, "" when it is idle:
	// SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod or SyncTerminatedPod.
	Sync string
	// SyncOp is that update's type as the trace writes it (create, update, sync, kill,
	// terminating, terminated).
	SyncOp string
	// WaitsForCache is set while the taken update waits for a PLEG relist newer than the last
	// sync (the kubelet's podCache.GetNewerThan); the sync function has not been called yet.
	WaitsForCache bool
	// Until is when the sync in progress ends, zero when none is in progress or when it waits
	// for a call beside the workers (Result.Blocked), which no instant ends.
	Until time.Time
}

// Views returns every worker the Workers know, by pod name and then UID: a read-only view for
// readers that teach or inspect the pod workers.
func (w *Workers) Views() []View {
	out := make([]View, 0, len(w.pods))
	for _, s := range w.pods {
		v := View{UID: s.uid, Pod: s.key, State: s.state}
		if s.pending != nil {
			v.Pending = s.pending.UpdateType.String()
		}
		if wk := s.work; wk != nil {
			v.Sync, v.SyncOp = syncFunc(wk), workOp(wk)
			v.WaitsForCache = !wk.called
			if wk.called {
				v.Until = wk.done
			}
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b View) int {
		if c := strings.Compare(a.Pod, b.Pod); c != 0 {
			return c
		}
		return strings.Compare(string(a.UID), string(b.UID))
	})
	return out
}

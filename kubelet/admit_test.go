package kubelet

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

type refusingDevices struct{ ok bool }

func (d refusingDevices) GetCapacity() (v1.ResourceList, v1.ResourceList, []string) {
	return nil, nil, nil
}

func (d refusingDevices) RemovePods(map[string]bool) {}

func (d refusingDevices) Admit(context.Context, *v1.Pod) (bool, string, string) {
	if d.ok {
		return true, "", ""
	}
	return false, "UnexpectedAdmissionError", "Allocate failed due to no room, which is unexpected"
}

type statusLog map[string]v1.PodStatus

func (s statusLog) SetPodStatus(pod *v1.Pod, st v1.PodStatus) { s[pod.Name] = st }

func TestAdmitterRejectsWithStatusAndEvent(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gpu", UID: "u1"}}
	statuses := statusLog{}
	rec := record.NewFakeRecorder(4)
	if !(admitter{devices: refusingDevices{ok: true}, maxPods: 110, count: noCount, active: noPods, status: statuses, recorder: rec}).Admit(context.Background(), pod) {
		t.Fatal("admitted pod refused")
	}
	if (admitter{devices: refusingDevices{}, maxPods: 110, count: noCount, active: noPods, status: statuses, recorder: rec}).Admit(context.Background(), pod) {
		t.Fatal("refused pod admitted")
	}
	st := statuses["gpu"]
	if st.Phase != v1.PodFailed || st.Reason != "UnexpectedAdmissionError" || st.Message != "Pod was rejected: Allocate failed due to no room, which is unexpected" || st.QOSClass != v1.PodQOSBestEffort {
		t.Errorf("status = %+v", st)
	}
	if got := <-rec.Events; got != "Warning UnexpectedAdmissionError Allocate failed due to no room, which is unexpected" {
		t.Errorf("event = %q", got)
	}
}

func noPods() map[string]bool { return nil }

func noCount(types.UID) int { return 0 }

// TestAdmitterCountsPods checks the pod count of the predicate admit handler: the other active
// pods plus the new one must fit maxPods; the new pod itself, already in the pod manager, is not
// counted twice.
func TestAdmitterCountsPods(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "new", UID: "new"}}
	for _, tc := range []struct {
		name    string
		active  map[string]bool
		maxPods int
		wantOK  bool
		wantMsg string
	}{
		{name: "room left", active: map[string]bool{"a": true, "new": true}, maxPods: 2, wantOK: true},
		{name: "full", active: map[string]bool{"a": true, "b": true, "new": true}, maxPods: 2,
			wantMsg: "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"},
		{name: "full without devices", active: map[string]bool{"a": true}, maxPods: 1,
			wantMsg: "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statuses := statusLog{}
			rec := record.NewFakeRecorder(4)
			a := admitter{maxPods: tc.maxPods, active: func() map[string]bool { return tc.active }, status: statuses, recorder: rec,
				count: func(except types.UID) int {
					n := 0
					for uid := range tc.active {
						if types.UID(uid) != except {
							n++
						}
					}
					return n
				}}
			if tc.name != "full without devices" {
				a.devices = refusingDevices{ok: true}
			}
			if got := a.Admit(context.Background(), pod); got != tc.wantOK {
				t.Fatalf("Admit() = %v, want %v", got, tc.wantOK)
			}
			if tc.wantOK {
				return
			}
			if st := statuses["new"]; st.Phase != v1.PodFailed || st.Reason != "OutOfpods" || st.Message != tc.wantMsg {
				t.Errorf("status = %+v, want Failed OutOfpods %q", st, tc.wantMsg)
			}
			if got := <-rec.Events; got != "Warning OutOfpods "+strings.TrimPrefix(tc.wantMsg, "Pod was rejected: ") {
				t.Errorf("event = %q", got)
			}
		})
	}
}

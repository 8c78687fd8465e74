package kubelet

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	if !(admitter{devices: refusingDevices{ok: true}, active: noPods, status: statuses, recorder: rec}).Admit(context.Background(), pod) {
		t.Fatal("admitted pod refused")
	}
	if (admitter{devices: refusingDevices{}, active: noPods, status: statuses, recorder: rec}).Admit(context.Background(), pod) {
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

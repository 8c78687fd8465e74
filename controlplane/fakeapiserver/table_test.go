package fakeapiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/controlplane/fakeapiserver"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

func TestPodTable(t *testing.T) {
	f := newFixture(t, fakeapiserver.Options{})
	ctx := context.Background()
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	restartedAt := metav1.NewTime(start.Add(-2 * time.Minute))
	tests := []struct {
		name   string
		status corev1.PodStatus
		init   bool
		delete bool
		want   []any
	}{
		{"running", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c", Ready: true, State: running, RestartCount: 2,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: restartedAt}}},
		}}, false, false, []any{"running", "1/1", "Running", "2 (3m ago)"}},
		{"crashloop", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}, RestartCount: 5},
		}}, false, false, []any{"crashloop", "0/1", "CrashLoopBackOff", "5"}},
		{"completed", corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		}}, false, false, []any{"completed", "0/1", "Completed", "0"}},
		{"exitcode", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}},
		}}, false, false, []any{"exitcode", "0/1", "ExitCode:3", "0"}},
		{"initializing", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "init", State: running},
		}}, true, false, []any{"initializing", "0/1", "Init:0/1", "0"}},
		{"terminating", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c", Ready: true, State: running},
		}}, false, true, []any{"terminating", "1/1", "Terminating", "0"}},
	}
	for _, tc := range tests {
		pod := newPod("default", tc.name, "node-1")
		if tc.init {
			pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "i"}}
		}
		pod = f.createPod(t, pod)
		pod.Status = tc.status
		if _, err := f.client.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if tc.delete {
			if err := f.client.CoreV1().Pods("default").Delete(ctx, tc.name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.clock.Step(time.Minute)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", f.ts.URL+"/api/v1/namespaces/default/pods/"+tc.name, nil)
			req.Header.Set("Accept", tableAccept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var table metav1.Table
			if err := json.NewDecoder(resp.Body).Decode(&table); err != nil || table.Kind != "Table" || len(table.Rows) != 1 {
				t.Fatalf("GET %s as Table = %s with %d rows, %v", tc.name, table.Kind, len(table.Rows), err)
			}
			cells := table.Rows[0].Cells
			want := append(tc.want, "60s", "<none>", "node-1", "<none>", "<none>")
			if diff := cmp.Diff(fmt.Sprint(want), fmt.Sprint(cells)); diff != "" {
				t.Errorf("row of %s (-want +got):\n%s", tc.name, diff)
			}
			var names []string
			for _, c := range table.ColumnDefinitions {
				names = append(names, c.Name)
			}
			wantNames := []string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
		})
	}
}

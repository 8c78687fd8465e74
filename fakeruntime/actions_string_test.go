package fakeruntime

import (
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// joinedActions is podActions.String as a join of its parts, the way it was first written: the
// reference the built string is held to.
func joinedActions(a podActions) string {
	var parts []string
	list := func(cs []*v1.Container) []string {
		names := make([]string, len(cs))
		for i, c := range cs {
			names[i] = c.Name
		}
		return names
	}
	if a.killPod {
		parts = append(parts, "kill")
	}
	if a.createSandbox {
		parts = append(parts, "sandbox(attempt="+strconv.Itoa(a.attempt)+")")
	}
	if len(a.kill) > 0 {
		names := make([]string, len(a.kill))
		for i, k := range a.kill {
			names[i] = k.container.Name
		}
		parts = append(parts, "killContainers=["+strings.Join(names, " ")+"]")
	}
	if len(a.initStart) > 0 {
		parts = append(parts, "init="+strings.Join(list(a.initStart), ","))
	}
	if r := a.updates.String(); r != "" {
		parts = append(parts, r)
	}
	if len(a.start) > 0 {
		parts = append(parts, "start=["+strings.Join(list(a.start), " ")+"]")
	}
	return strings.Join(parts, " ")
}

// TestPodActionsString checks the sync trace's summary of actions, part by part and with every
// part at once, against the join of its parts.
func TestPodActionsString(t *testing.T) {
	app, side, init2 := &v1.Container{Name: "app"}, &v1.Container{Name: "side"}, &v1.Container{Name: "init-2"}
	for _, tc := range []struct {
		name string
		acts podActions
		want string
	}{
		{"nothing", podActions{}, ""},
		{"kill", podActions{killPod: true}, "kill"},
		{"a sandbox", podActions{createSandbox: true, attempt: 12}, "sandbox(attempt=12)"},
		{"container kills", podActions{kill: []containerKill{{container: app}, {container: side}}}, "killContainers=[app side]"},
		{"init containers", podActions{initStart: []*v1.Container{side, init2}}, "init=side,init-2"},
		{"a resize", podActions{updates: resizeUpdates{cpu: []containerUpdate{{container: app}}}}, "resize=[app]"},
		{"starts", podActions{start: []*v1.Container{app, side}}, "start=[app side]"},
		{"everything", podActions{killPod: true, createSandbox: true, attempt: 1, kill: []containerKill{{container: app}},
			initStart: []*v1.Container{init2}, updates: resizeUpdates{memory: []containerUpdate{{container: side}}},
			start: []*v1.Container{app}},
			"kill sandbox(attempt=1) killContainers=[app] init=init-2 resize=[side] start=[app]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.acts.String(); got != tc.want || got != joinedActions(tc.acts) {
				t.Errorf("String() = %q, want %q (joined: %q)", got, tc.want, joinedActions(tc.acts))
			}
		})
	}
}

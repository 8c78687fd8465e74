package podvalidation_test

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/podvalidation"
)

// ExampleValidatePodCreate checks one pod with both subsets: StaticPod also checks the image pull
// policy, which defaulting would have set, and words an empty restart policy as the API server does.
func ExampleValidatePodCreate() {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "web", Image: "nginx", TerminationMessagePolicy: v1.TerminationMessageReadFile}},
			DNSPolicy:  v1.DNSClusterFirst,
		},
	}
	for _, subset := range []podvalidation.Subset{podvalidation.APIServer, podvalidation.StaticPod} {
		fmt.Println(subset)
		for _, err := range podvalidation.ValidatePodCreate(pod, subset) {
			fmt.Println(" ", err)
		}
	}
	// Output:
	// APIServer
	//   spec.restartPolicy: Unsupported value: "": supported values: "Always", "OnFailure", "Never"
	// StaticPod
	//   spec.containers[0].imagePullPolicy: Required value
	//   spec.restartPolicy: Required value
}

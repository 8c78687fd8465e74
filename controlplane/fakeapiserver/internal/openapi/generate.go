package openapi

// The version of openapi-gen is the k8s.io/kube-openapi the module requires, so that the generated
// code and the builder that reads it agree. The packages are every API group version whose kinds
// fakeapiserver serves, and the apimachinery packages their types refer to.
//go:generate go run k8s.io/kube-openapi/cmd/openapi-gen@v0.0.0-20250910181357-589584f1c912 --output-dir . --output-pkg github.com/minikubelet/minikubelet/controlplane/fakeapiserver/internal/openapi --output-file zz_generated.openapi.go --report-filename /dev/null k8s.io/api/core/v1 k8s.io/api/coordination/v1 k8s.io/api/storage/v1 k8s.io/api/events/v1 k8s.io/api/discovery/v1 k8s.io/api/resource/v1 k8s.io/api/authorization/v1 k8s.io/api/authentication/v1 k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/api/resource k8s.io/apimachinery/pkg/util/intstr k8s.io/apimachinery/pkg/runtime k8s.io/apimachinery/pkg/version

// Package envvars makes a container's environment: the kubelet's makeEnvironmentVariables
// (kubelet_pods.go) with getServiceEnvVarMap and pkg/kubelet/envvars' FromServices, which
// kuberuntime's generateContainerConfig asks through the runtime helper before it creates a
// container.
//
// envFrom comes first, then env, which wins: each variable is a value with its $(VAR) references
// expanded (against the container's variables, then the services'), or a reference to a ConfigMap
// or Secret key, a pod field or a container resource. A ConfigMap or Secret that does not exist,
// or a key that it lacks, fails the container with CreateContainerConfigError and the kubelet's
// message (`configmap "x" not found`, "couldn't find key k in ConfigMap ns/x") unless the
// reference is optional, when it is skipped. Every envFrom key is taken as it is: v1.35's API
// server accepts any printable name (RelaxedEnvironmentVariableValidation), and the kubelet no
// longer skips any. Then come the service links: the kubernetes Service's variables always, the
// pod namespace's Services' with enableServiceLinks; an API pod waits with an error until the
// service informer has listed once.
//
// The kubelet hands the runtime the variables in map order, which is random; a Maker returns them
// sorted by name. The fake runtime runs nothing with them and asks CheckEnvironment instead: the
// same references resolved in the same order, failing with the same first error, without making
// the variables.
package envvars

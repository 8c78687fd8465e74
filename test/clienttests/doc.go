// Package clienttests drives the fake API server with client libraries the main module does not
// depend on, such as controller-runtime. It is a module of its own so that their dependencies
// stay out of minikubelet's go.mod.
package clienttests

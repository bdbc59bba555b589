//go:build tools

// Package tools records the commands this wrapper module builds, so that
// `go mod tidy` keeps their dependencies in go.mod and go.sum. It is never
// compiled (the "tools" build tag is never set).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)

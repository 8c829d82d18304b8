// Test harness module: containerd v2.4.2's go-cni and libcni (its go.mod), built by
// scripts/libcni-setup.sh into the cache; nothing of it ships with weft.
module weft.test/libcni-harness

go 1.24.0

require (
	github.com/containerd/go-cni v1.1.14
	github.com/containernetworking/cni v1.3.1
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/petermattis/goid v0.0.0-20240813172612-4fcff4a6cae7 // indirect
	github.com/sasha-s/go-deadlock v0.3.5 // indirect
	go.opentelemetry.io/otel v1.29.0 // indirect
	go.opentelemetry.io/otel/metric v1.29.0 // indirect
	go.opentelemetry.io/otel/trace v1.29.0 // indirect
)

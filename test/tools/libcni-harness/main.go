// Command libcni-harness drives weft's conflists through the CNI library containerd 2 links
// (go-cni for CRI's Status, libcni for GC, ADD and DEL), so the tests see which version libcni
// picks from "cniVersions" and whether STATUS and GC reach the plugins. One JSON line on stdout;
// exit 0 on success, 1 when the library returned an error (its CNI code in "code" when it has one).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	gocni "github.com/containerd/go-cni"
	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func emit(out map[string]any, err error) {
	out["ok"] = err == nil
	if err != nil {
		out["error"] = err.Error()
		var ce *types.Error
		if errors.As(err, &ce) {
			out["code"] = ce.Code
		}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if err != nil {
		os.Exit(1)
	}
}

// status loads the conf dir the way containerd 2's CRI plugin does (loopback, then the first
// conflist) and calls go-cni's Status, which is what CRI's Status call runs.
func status(confDir, binDir string) {
	c, err := gocni.New(gocni.WithPluginConfDir(confDir), gocni.WithPluginDir([]string{binDir}), gocni.WithInterfacePrefix("eth"), gocni.WithMinNetworkCount(2))
	if err != nil {
		emit(map[string]any{"stage": "new"}, err)
	}
	if err := c.Load(gocni.WithLoNetwork, gocni.WithDefaultConf); err != nil {
		emit(map[string]any{"stage": "load"}, err)
	}
	versions := []string{}
	for _, n := range c.GetConfig().Networks {
		versions = append(versions, n.Config.Name+"="+n.Config.CNIVersion)
	}
	emit(map[string]any{"stage": "status", "versions": versions}, c.Status())
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: libcni-harness status|gc|add|del [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	confDir := fs.String("conf-dir", "", "conf dir (status)")
	conflist := fs.String("conflist", "", "conflist file (gc, add, del)")
	binDir := fs.String("bin-dir", "", "CNI plugin dir")
	cacheDir := fs.String("cache-dir", "", "libcni cache dir")
	netns := fs.String("netns", "", "netns path (add, del)")
	id := fs.String("id", "", "container ID (add, del)")
	ifName := fs.String("ifname", "eth0", "interface (add, del)")
	var valid multi
	fs.Var(&valid, "valid", "valid attachment <containerID>/<ifname> (gc, repeatable)")
	_ = fs.Parse(os.Args[2:])
	if os.Args[1] == "status" {
		status(*confDir, *binDir)
		return
	}
	list, err := libcni.ConfListFromFile(*conflist)
	if err != nil {
		emit(map[string]any{"stage": "load"}, err)
	}
	cfg := libcni.NewCNIConfigWithCacheDir([]string{*binDir}, *cacheDir, nil)
	out := map[string]any{"stage": os.Args[1], "cniVersion": list.CNIVersion}
	ctx := context.Background()
	rt := &libcni.RuntimeConf{ContainerID: *id, NetNS: *netns, IfName: *ifName}
	switch os.Args[1] {
	case "gc":
		args := &libcni.GCArgs{}
		for _, v := range valid {
			cid, ifn, _ := strings.Cut(v, "/")
			args.ValidAttachments = append(args.ValidAttachments, types.GCAttachment{ContainerID: cid, IfName: ifn})
		}
		emit(out, cfg.GCNetworkList(ctx, list, args))
	case "add":
		res, err := cfg.AddNetworkList(ctx, list, rt)
		if err == nil {
			out["result"] = res
		}
		emit(out, err)
	case "del":
		emit(out, cfg.DelNetworkList(ctx, list, rt))
	default:
		fmt.Fprintf(os.Stderr, "unknown command %s\n", os.Args[1])
		os.Exit(2)
	}
}

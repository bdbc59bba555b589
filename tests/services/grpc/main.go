// Command grpchealth is the gRPC health server of waitcmd's grpc tests: the
// reference implementation (google.golang.org/grpc/health) served over h2c
// and TLS, whose statuses the tests flip through a small HTTP control
// endpoint, plus a bare gRPC server without the health service.
//
//	grpchealth -h2c 127.0.0.1:0 -tls 127.0.0.1:0 -cert c.pem -key k.pem \
//	  -bare 127.0.0.1:0 -control 127.0.0.1:0 [-require-header 'name: value']
//
// Once listening it prints one line per listener, `h2c ADDR`, `tls ADDR`,
// `bare ADDR`, `control ADDR`, then `ready`. The control endpoint takes
// `POST /status?service=NAME&status=SERVING|NOT_SERVING|UNKNOWN|SERVICE_UNKNOWN`
// (SERVICE_UNKNOWN forgets the service: Check answers NOT_FOUND) and
// `POST /deploy?name=NAME&state=STARTING|READY&replicas=N&version=N`, what
// waitcmd.test.v1.Deploy/GetStatus answers for NAME (deploy.go). The h2c and
// TLS servers also serve server reflection (grpc.reflection.v1 and v1alpha);
// the bare one serves nothing. The h2c server also serves
// waitcmd.test.v1.Probe/Ready, Health/Check under another name (not described
// by reflection: it has no descriptor of its own).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// statuses sets the health server's statuses on the control endpoint's
// request; a service set to SERVICE_UNKNOWN is answered NOT_FOUND by the
// interceptor (health.Server cannot forget a service).
type statuses struct {
	mu  sync.Mutex
	srv *health.Server
}

func (s *statuses) set(service, st string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == "SERVICE_UNKNOWN" {
		unknown.Store(service, true)
		return nil
	}
	v, ok := healthpb.HealthCheckResponse_ServingStatus_value[st]
	if !ok {
		return fmt.Errorf("unknown status %q", st)
	}
	unknown.Delete(service)
	s.srv.SetServingStatus(service, healthpb.HealthCheckResponse_ServingStatus(v))
	return nil
}

// unknown holds the services Check answers NOT_FOUND for.
var unknown sync.Map

func main() {
	h2cAddr := flag.String("h2c", "", "address of the plaintext (h2c) listener")
	tlsAddr := flag.String("tls", "", "address of the TLS listener")
	certFile := flag.String("cert", "", "PEM certificate of the TLS listener")
	keyFile := flag.String("key", "", "PEM key of the TLS listener")
	bareAddr := flag.String("bare", "", "address of a gRPC server without the health service")
	controlAddr := flag.String("control", "", "address of the HTTP control endpoint")
	requireHeader := flag.String("require-header", "", "'name: value' every call must carry")
	flag.Parse()

	hs := health.NewServer()
	st := &statuses{srv: hs}
	dep := &deploys{m: map[string]deployment{}}
	deploy := registerDeploy(dep)
	// waitcmd.test.v1.Probe/Ready: the health check under another name (grpc.health.v1's
	// messages, the same statuses), as some servers expose theirs.
	probe := &grpc.ServiceDesc{
		ServiceName: "waitcmd.test.v1.Probe",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Ready",
			Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
				in := new(healthpb.HealthCheckRequest)
				if err := dec(in); err != nil {
					return nil, err
				}
				check := func(ctx context.Context, req any) (any, error) {
					return hs.Check(ctx, req.(*healthpb.HealthCheckRequest))
				}
				if interceptor == nil {
					return check(ctx, in)
				}
				return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/waitcmd.test.v1.Probe/Ready"}, check)
			},
		}},
	}

	var wantName, wantValue string
	if *requireHeader != "" {
		i := strings.Index(*requireHeader, ":")
		if i <= 0 {
			log.Fatalf("-require-header: expected 'name: value'")
		}
		wantName = strings.ToLower(strings.TrimSpace((*requireHeader)[:i]))
		wantValue = strings.TrimSpace((*requireHeader)[i+1:])
	}
	checkHeader := func(ctx context.Context) error {
		if wantName == "" {
			return nil
		}
		md, _ := metadata.FromIncomingContext(ctx)
		for _, v := range md.Get(wantName) {
			if v == wantValue {
				return nil
			}
		}
		return status.Error(codes.Unauthenticated, "missing or wrong "+wantName)
	}
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := checkHeader(ctx); err != nil {
			return nil, err
		}
		if r, ok := req.(*healthpb.HealthCheckRequest); ok {
			if _, gone := unknown.Load(r.GetService()); gone {
				return nil, status.Error(codes.NotFound, "unknown service")
			}
		}
		return handler(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if err := checkHeader(ss.Context()); err != nil {
			return err
		}
		return handler(srv, ss)
	}
	opts := []grpc.ServerOption{grpc.UnaryInterceptor(unary), grpc.StreamInterceptor(stream)}

	serve := func(name, addr string, s *grpc.Server) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		fmt.Printf("%s %s\n", name, l.Addr())
		go func() {
			if err := s.Serve(l); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
		}()
	}
	if *h2cAddr != "" {
		s := grpc.NewServer(opts...)
		healthpb.RegisterHealthServer(s, hs)
		s.RegisterService(deploy, struct{}{})
		s.RegisterService(probe, struct{}{})
		reflection.Register(s)
		serve("h2c", *h2cAddr, s)
	}
	if *tlsAddr != "" {
		creds, err := credentials.NewServerTLSFromFile(*certFile, *keyFile)
		if err != nil {
			log.Fatalf("tls: %v", err)
		}
		s := grpc.NewServer(append(opts, grpc.Creds(creds))...)
		healthpb.RegisterHealthServer(s, hs)
		s.RegisterService(deploy, struct{}{})
		reflection.Register(s)
		serve("tls", *tlsAddr, s)
	}
	if *bareAddr != "" {
		serve("bare", *bareAddr, grpc.NewServer(opts...))
	}
	if *controlAddr != "" {
		l, err := net.Listen("tcp", *controlAddr)
		if err != nil {
			log.Fatalf("control: %v", err)
		}
		fmt.Printf("control %s\n", l.Addr())
		mux := http.NewServeMux()
		mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
			if err := st.set(r.URL.Query().Get("service"), r.URL.Query().Get("status")); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		mux.HandleFunc("/deploy", func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if err := dep.set(q.Get("name"), q.Get("state"), q.Get("replicas"), q.Get("version")); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintln(w, "ok")
		})
		go func() { log.Fatal(http.Serve(l, mux)) }()
	}
	fmt.Println("ready")
	os.Stdout.Sync()
	select {}
}

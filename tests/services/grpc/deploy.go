package main

// The Deploy service of the grpc tests' --method: a unary method whose answer
// the tests set through the control endpoint, described at run time (no
// generated code, no protoc) and registered with protoregistry so that server
// reflection serves its descriptor.
//
//	package waitcmd.test.v1;
//	enum State { STATE_UNKNOWN = 0; STARTING = 1; READY = 2; }
//	message StatusRequest { string name = 1; }
//	message Meta { string region = 1; }
//	message StatusReply {
//	  string name = 1; State state = 2; int32 ready_replicas = 3;
//	  int64 version = 4; repeated string tags = 5; Meta meta = 6;
//	}
//	service Deploy {
//	  rpc GetStatus(StatusRequest) returns (StatusReply);
//	  rpc Watch(StatusRequest) returns (stream StatusReply);
//	}

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// deployment is what GetStatus answers for one name.
type deployment struct {
	state    string
	replicas int32
	version  int64
}

// deploys holds the deployments the control endpoint set; a name never set
// is STARTING with no replica.
type deploys struct {
	mu sync.Mutex
	m  map[string]deployment
}

func (d *deploys) set(name, state, replicas, version string) error {
	if _, ok := stateValues[state]; !ok {
		return fmt.Errorf("unknown state %q", state)
	}
	r, err := strconv.Atoi(replicas)
	if replicas != "" && err != nil {
		return fmt.Errorf("replicas: %v", err)
	}
	v, err := strconv.ParseInt(version, 10, 64)
	if version != "" && err != nil {
		return fmt.Errorf("version: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[name] = deployment{state: state, replicas: int32(r), version: v}
	return nil
}

func (d *deploys) get(name string) deployment {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dep, ok := d.m[name]; ok {
		return dep
	}
	return deployment{state: "STARTING"}
}

var stateValues = map[string]int32{"STATE_UNKNOWN": 0, "STARTING": 1, "READY": 2}

func str(s string) *string { return proto.String(s) }
func num(n int32) *int32   { return proto.Int32(n) }

func field(name string, n int32, t descriptorpb.FieldDescriptorProto_Type, typeName string, repeated bool) *descriptorpb.FieldDescriptorProto {
	label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	if repeated {
		label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	}
	f := &descriptorpb.FieldDescriptorProto{Name: str(name), Number: num(n), Type: t.Enum(), Label: label.Enum(), JsonName: str(jsonName(name))}
	if typeName != "" {
		f.TypeName = str(typeName)
	}
	return f
}

// jsonName is protoc's lowerCamelCase JSON name of a field.
func jsonName(name string) string {
	out := []byte{}
	up := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		out = append(out, c)
	}
	return string(out)
}

// registerDeploy describes the Deploy service, registers its file for
// reflection and returns the grpc.ServiceDesc that serves it.
func registerDeploy(d *deploys) *grpc.ServiceDesc {
	T := descriptorpb.FieldDescriptorProto_TYPE_STRING
	file := &descriptorpb.FileDescriptorProto{
		Name:    str("waitcmd/test/v1/deploy.proto"),
		Package: str("waitcmd.test.v1"),
		Syntax:  str("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: str("State"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: str("STATE_UNKNOWN"), Number: num(0)},
				{Name: str("STARTING"), Number: num(1)},
				{Name: str("READY"), Number: num(2)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: str("StatusRequest"), Field: []*descriptorpb.FieldDescriptorProto{field("name", 1, T, "", false)}},
			{Name: str("Meta"), Field: []*descriptorpb.FieldDescriptorProto{field("region", 1, T, "", false)}},
			{Name: str("StatusReply"), Field: []*descriptorpb.FieldDescriptorProto{
				field("name", 1, T, "", false),
				field("state", 2, descriptorpb.FieldDescriptorProto_TYPE_ENUM, ".waitcmd.test.v1.State", false),
				field("ready_replicas", 3, descriptorpb.FieldDescriptorProto_TYPE_INT32, "", false),
				field("version", 4, descriptorpb.FieldDescriptorProto_TYPE_INT64, "", false),
				field("tags", 5, T, "", true),
				field("meta", 6, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".waitcmd.test.v1.Meta", false),
			}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: str("Deploy"),
			Method: []*descriptorpb.MethodDescriptorProto{
				{Name: str("GetStatus"), InputType: str(".waitcmd.test.v1.StatusRequest"), OutputType: str(".waitcmd.test.v1.StatusReply")},
				{Name: str("Watch"), InputType: str(".waitcmd.test.v1.StatusRequest"), OutputType: str(".waitcmd.test.v1.StatusReply"), ServerStreaming: proto.Bool(true)},
			},
		}},
	}
	fd, err := protodesc.NewFile(file, protoregistry.GlobalFiles)
	if err != nil {
		panic(err)
	}
	if err := protoregistry.GlobalFiles.RegisterFile(fd); err != nil {
		panic(err)
	}
	reqType := fd.Messages().ByName("StatusRequest")
	replyType := fd.Messages().ByName("StatusReply")
	metaType := fd.Messages().ByName("Meta")
	get := func(ctx context.Context, req any) (any, error) {
		in := req.(*dynamicpb.Message)
		name := in.Get(reqType.Fields().ByName("name")).String()
		dep := d.get(name)
		out := dynamicpb.NewMessage(replyType)
		f := replyType.Fields()
		out.Set(f.ByName("name"), protoreflect.ValueOfString(name))
		out.Set(f.ByName("state"), protoreflect.ValueOfEnum(protoreflect.EnumNumber(stateValues[dep.state])))
		out.Set(f.ByName("ready_replicas"), protoreflect.ValueOfInt32(dep.replicas))
		out.Set(f.ByName("version"), protoreflect.ValueOfInt64(dep.version))
		tags := out.Mutable(f.ByName("tags")).List()
		tags.Append(protoreflect.ValueOfString("blue"))
		tags.Append(protoreflect.ValueOfString("canary"))
		meta := dynamicpb.NewMessage(metaType)
		meta.Set(metaType.Fields().ByName("region"), protoreflect.ValueOfString("eu-1"))
		out.Set(f.ByName("meta"), protoreflect.ValueOfMessage(meta))
		return out, nil
	}
	return &grpc.ServiceDesc{
		ServiceName: "waitcmd.test.v1.Deploy",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "GetStatus",
			Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
				in := dynamicpb.NewMessage(reqType)
				if err := dec(in); err != nil {
					return nil, err
				}
				if interceptor == nil {
					return get(ctx, in)
				}
				info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/waitcmd.test.v1.Deploy/GetStatus"}
				return interceptor(ctx, in, info, get)
			},
		}},
		Streams: []grpc.StreamDesc{{
			StreamName:    "Watch",
			ServerStreams: true,
			Handler: func(srv any, stream grpc.ServerStream) error {
				return status.Error(codes.Unimplemented, "Watch is not served")
			},
		}},
		Metadata: "waitcmd/test/v1/deploy.proto",
	}
}

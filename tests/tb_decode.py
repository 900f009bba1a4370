#!/usr/bin/python3
"""An independent reader of TensorBoard event files for the tests: the
TFRecord framing and masked CRC-32C in plain Python, the messages decoded
by Debian's python3-protobuf from descriptors built here from the format's
field numbers (nothing shared with Tensor Workbench's .proto files or C).

    tb_decode.py FILE   prints one JSON object per value, one a line

Floats are printed with float.hex() so comparisons are exact. Exit status
2 when python3-protobuf is missing (the caller skips), 1 on a bad file."""
import hashlib
import json
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError:
    print("python3-protobuf is not installed", file=sys.stderr)
    sys.exit(2)

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
T = {"double": F.TYPE_DOUBLE, "float": F.TYPE_FLOAT, "int64": F.TYPE_INT64, "int32": F.TYPE_INT32,
     "bool": F.TYPE_BOOL, "string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "msg": F.TYPE_MESSAGE}

# (message, [(name, number, type, label, message type or None)]), TensorFlow's field numbers.
MESSAGES = [
    ("Event", [("wall_time", 1, "double", OPT, None), ("step", 2, "int64", OPT, None),
               ("file_version", 3, "string", OPT, None), ("graph_def", 4, "bytes", OPT, None),
               ("summary", 5, "msg", OPT, "Summary")]),
    ("Summary", [("value", 1, "msg", REP, "SummaryValue")]),
    ("SummaryValue", [("tag", 1, "string", OPT, None), ("simple_value", 2, "float", OPT, None),
                      ("image", 4, "msg", OPT, "SummaryImage"), ("histo", 5, "msg", OPT, "HistogramProto"),
                      ("tensor", 8, "msg", OPT, "TensorProto"), ("metadata", 9, "msg", OPT, "SummaryMetadata")]),
    ("SummaryImage", [("height", 1, "int32", OPT, None), ("width", 2, "int32", OPT, None),
                      ("colorspace", 3, "int32", OPT, None), ("encoded_image_string", 4, "bytes", OPT, None)]),
    ("HistogramProto", [("min", 1, "double", OPT, None), ("max", 2, "double", OPT, None),
                        ("num", 3, "double", OPT, None), ("sum", 4, "double", OPT, None),
                        ("sum_squares", 5, "double", OPT, None), ("bucket_limit", 6, "double", REP, None),
                        ("bucket", 7, "double", REP, None)]),
    ("SummaryMetadata", [("plugin_data", 1, "msg", OPT, "PluginData")]),
    ("PluginData", [("plugin_name", 1, "string", OPT, None), ("content", 2, "bytes", OPT, None)]),
    ("TensorProto", [("dtype", 1, "int32", OPT, None), ("tensor_shape", 2, "msg", OPT, "TensorShapeProto"),
                     ("tensor_content", 4, "bytes", OPT, None), ("float_val", 5, "float", REP, None),
                     ("int_val", 7, "int32", REP, None), ("int64_val", 10, "int64", REP, None),
                     ("double_val", 6, "double", REP, None), ("string_val", 8, "bytes", REP, None)]),
    ("TensorShapeProto", [("dim", 2, "msg", REP, "Dim"), ("unknown_rank", 3, "bool", OPT, None)]),
    ("Dim", [("size", 1, "int64", OPT, None)]),
    # The hparams plugin (plugin_data.content) and google.protobuf.Value's layout.
    ("HParamsPluginData", [("version", 1, "int32", OPT, None),
                           ("session_start_info", 3, "msg", OPT, "SessionStartInfo")]),
    ("SessionStartInfo", [("hparams", 1, "msg", REP, "HparamsEntry"), ("start_time_secs", 5, "double", OPT, None)]),
    ("HparamsEntry", [("key", 1, "string", OPT, None), ("value", 2, "msg", OPT, "Value")]),
    ("Value", [("null_value", 1, "int32", OPT, None), ("number_value", 2, "double", OPT, None),
               ("string_value", 3, "string", OPT, None), ("bool_value", 4, "bool", OPT, None),
               ("struct_value", 5, "msg", OPT, "Struct"), ("list_value", 6, "msg", OPT, "ListValue")]),
    ("Struct", [("fields", 1, "msg", REP, "FieldsEntry")]),
    ("FieldsEntry", [("key", 1, "string", OPT, None), ("value", 2, "msg", OPT, "Value")]),
    ("ListValue", [("values", 1, "msg", REP, "Value")]),
    # graph_def: GraphDef, NodeDef, the attr map's entries, AttrValue's list of shapes.
    ("GraphDef", [("node", 1, "msg", REP, "NodeDef"), ("library", 2, "msg", OPT, "FunctionDefLibrary")]),
    ("NodeDef", [("name", 1, "string", OPT, None), ("op", 2, "string", OPT, None),
                 ("input", 3, "string", REP, None), ("attr", 5, "msg", REP, "AttrEntry")]),
    ("AttrEntry", [("key", 1, "string", OPT, None), ("value", 2, "msg", OPT, "AttrValue")]),
    ("AttrValue", [("list", 1, "msg", OPT, "AttrList"), ("i", 3, "int64", OPT, None),
                   ("func", 10, "msg", OPT, "NameAttrList")]),
    ("NameAttrList", [("name", 1, "string", OPT, None)]),
    # The function library: function.proto's FunctionDefLibrary and
    # FunctionDef (signature, node_def, the ret map), op_def.proto's OpDef.
    ("FunctionDefLibrary", [("function", 1, "msg", REP, "FunctionDef")]),
    ("FunctionDef", [("signature", 1, "msg", OPT, "OpDef"), ("node_def", 3, "msg", REP, "NodeDef"),
                     ("ret", 4, "msg", REP, "RetEntry")]),
    ("RetEntry", [("key", 1, "string", OPT, None), ("value", 2, "string", OPT, None)]),
    ("OpDef", [("name", 1, "string", OPT, None), ("input_arg", 2, "msg", REP, "ArgDef"),
               ("output_arg", 3, "msg", REP, "ArgDef")]),
    ("ArgDef", [("name", 1, "string", OPT, None)]),
    ("AttrList", [("type", 6, "int32", REP, None), ("shape", 7, "msg", REP, "TensorShapeProto")]),
]


def build_classes():
    fd = descriptor_pb2.FileDescriptorProto(name="tb_decode_test.proto", package="tbtest", syntax="proto2")
    for name, fields in MESSAGES:
        m = fd.message_type.add(name=name)
        for fname, number, ftype, label, mtype in fields:
            f = m.field.add(name=fname, number=number, type=T[ftype], label=label)
            if mtype:
                f.type_name = ".tbtest." + mtype
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    classes = {}
    for name, _ in MESSAGES:
        desc = pool.FindMessageTypeByName("tbtest." + name)
        if hasattr(message_factory, "GetMessageClass"):
            classes[name] = message_factory.GetMessageClass(desc)
        else:
            classes[name] = message_factory.MessageFactory(pool).GetPrototype(desc)
    return classes


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    with open(path, "rb") as f:
        blob = f.read()
    at = 0
    while at < len(blob):
        if at + 12 > len(blob):
            raise ValueError("%s: offset %d: a record cut in its header" % (path, at))
        (n,) = struct.unpack_from("<Q", blob, at)
        (len_crc,) = struct.unpack_from("<I", blob, at + 8)
        if masked(blob[at:at + 8]) != len_crc:
            raise ValueError("%s: offset %d: bad length CRC" % (path, at))
        data = blob[at + 12:at + 12 + n]
        (data_crc,) = struct.unpack_from("<I", blob, at + 12 + n)
        if len(data) != n or masked(data) != data_crc:
            raise ValueError("%s: offset %d: bad data CRC" % (path, at))
        yield data
        at += 12 + n + 4


def hparam(v):
    kind = v.WhichOneof("kind") if v.DESCRIPTOR.oneofs else None
    for field in ("number_value", "string_value", "bool_value", "struct_value", "list_value"):
        if v.HasField(field):
            x = getattr(v, field)
            if field == "number_value":
                return float(x).hex()
            if field == "struct_value":
                return {f.key: hparam(f.value) for f in x.fields}
            if field == "list_value":
                return [hparam(e) for e in x.values]
            return x
    return kind


def body_attr(v):
    """A function body node's attr as the output lengths read it: an int
    (Unpack's num), or a list of types by its length (output_types)."""
    return v.i if v.HasField("i") else len(v.list.type)


# A numeric TensorProto's dtypes (DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64):
# the struct format of one value in tensor_content, and the typed list.
NUMBERS = {1: ("<f", "float_val"), 2: ("<d", "double_val"), 3: ("<i", "int_val"), 9: ("<q", "int64_val")}


def numbers(t):
    fmt, field = NUMBERS[t.dtype]
    if t.tensor_content:
        return [x for (x,) in struct.iter_unpack(fmt, t.tensor_content)]
    return list(getattr(t, field))


def main():
    c = build_classes()
    for data in records(sys.argv[1]):
        e = c["Event"]()
        e.ParseFromString(data)
        if e.HasField("file_version"):
            print(json.dumps({"file_version": e.file_version}))
            continue
        if e.HasField("graph_def"):
            g = c["GraphDef"]()
            g.ParseFromString(e.graph_def)
            nodes = []
            for n in g.node:
                shapes = [None if s.unknown_rank else [d.size for d in s.dim]
                          for a in n.attr if a.key == "_output_shapes" for s in a.value.list.shape]
                nodes.append({"name": n.name, "op": n.op, "inputs": list(n.input), "shapes": shapes})
            functions = []
            for f in g.library.function:
                functions.append({"name": f.signature.name, "inputs": [a.name for a in f.signature.input_arg],
                                  "outputs": [a.name for a in f.signature.output_arg],
                                  "nodes": [{"name": n.name, "op": n.op, "inputs": list(n.input),
                                             "f": [a.value.func.name for a in n.attr if a.key == "f"],
                                             "attrs": {a.key: body_attr(a.value) for a in n.attr if a.key != "f"}}
                                            for n in f.node_def],
                                  "ret": {r.key: r.value for r in f.ret}})
            calls = {n.name: [a.value.func.name for a in n.attr if a.key == "f"] for n in g.node}
            print(json.dumps({"kind": "graph", "step": e.step, "nodes": nodes, "functions": functions,
                              "calls": calls}))
            continue
        for v in e.summary.value:
            out = {"tag": v.tag, "step": e.step, "wall_time": e.wall_time.hex(),
                   "plugin": v.metadata.plugin_data.plugin_name}
            if v.HasField("histo"):
                h = v.histo
                out.update(kind="histogram", min=h.min.hex(), max=h.max.hex(), num=h.num.hex(), sum=h.sum.hex(),
                           sum_squares=h.sum_squares.hex(), limits=[x.hex() for x in h.bucket_limit],
                           buckets=[x.hex() for x in h.bucket])
            elif v.HasField("image"):
                im = v.image
                out.update(kind="image", width=im.width, height=im.height, colorspace=im.colorspace,
                           size=len(im.encoded_image_string),
                           sha256=hashlib.sha256(im.encoded_image_string).hexdigest())
            elif v.HasField("simple_value"):
                out.update(kind="scalar", value=float(v.simple_value).hex())
            elif v.metadata.plugin_data.plugin_name == "hparams":
                p = c["HParamsPluginData"]()
                p.ParseFromString(v.metadata.plugin_data.content)
                out.update(kind="hparams", hparams={h.key: hparam(h.value) for h in p.session_start_info.hparams})
            elif v.metadata.plugin_data.plugin_name == "graph_keras_model":
                # The Keras callback's model config: one string, the plugin's
                # content its version.
                t = v.tensor
                out.update(kind="keras_model", dtype=t.dtype, rank=len(t.tensor_shape.dim),
                           content=v.metadata.plugin_data.content.decode("utf-8"),
                           config=[x.decode("utf-8") for x in t.string_val])
            elif v.HasField("tensor") and v.tensor.dtype == 2 and len(v.tensor.double_val) == 1:
                out.update(kind="scalar", value=v.tensor.double_val[0].hex())
            elif v.HasField("tensor") and v.tensor.dtype == 7 and len(v.tensor.string_val) == 1:
                out.update(kind="text", text=v.tensor.string_val[0].decode("utf-8"))
            elif v.HasField("tensor") and v.tensor.dtype in NUMBERS:
                out.update(kind="tensor", dtype=v.tensor.dtype, shape=[d.size for d in v.tensor.tensor_shape.dim],
                           values=[float(x).hex() for x in numbers(v.tensor)])
            else:
                out.update(kind="other")
            print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except (ValueError, OSError) as err:
        print(err, file=sys.stderr)
        sys.exit(1)

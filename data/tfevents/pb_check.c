/* tw__pb_check: a walk over protobuf wire bytes guided by protobuf-c's
 * descriptors. It serves twice: before a message type that can nest
 * without bound (hparams values) is handed to protobuf-c, whose unpacking
 * recurses once per level and would overflow the stack on a file of
 * nested length prefixes; and after protobuf-c refused a message, to say
 * which field of which message is wrong instead of "not an Event". */
#include <stdbool.h>
#include <stdio.h>

#include "tfevents_internal.h"

typedef struct {
    const uint8_t *p, *end;
} cursor;

static bool varint(cursor *c, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end)
            return false;
        uint8_t b = *c->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

static const char *wire_name(unsigned wire)
{
    switch (wire) {
    case 0: return "varint";
    case 1: return "64-bit";
    case 2: return "length-delimited";
    case 3: return "group start";
    case 4: return "group end";
    case 5: return "32-bit";
    default: return "invalid";
    }
}

static const char *type_name(ProtobufCType t)
{
    static const char *const names[] = {"int32",   "sint32", "sfixed32", "int64",  "sint64", "sfixed64",
                                        "uint32",  "fixed32", "uint64",  "fixed64", "float",  "double",
                                        "bool",    "enum",   "string",   "bytes",  "message"};
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "unknown";
}

/* The wire type a field's values take one by one. */
static unsigned wire_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return 1;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT: return 5;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE: return 2;
    default: return 0;
    }
}

static int check(const ProtobufCMessageDescriptor *d, cursor c, int depth, int max_depth, char *why, size_t size)
{
    if (depth > max_depth) {
        snprintf(why, size, "messages nested more than %d deep (in %s)", max_depth, d->name);
        return -1;
    }
    while (c.p < c.end) {
        uint64_t key, len;
        if (!varint(&c, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff) {
            snprintf(why, size, "a bad field key in %s", d->name);
            return -1;
        }
        unsigned wire = key & 7, id = (unsigned)(key >> 3);
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, id);
        if (f) {
            bool packed = f->label == PROTOBUF_C_LABEL_REPEATED && wire == 2 && wire_of(f->type) != 2;
            if (wire != wire_of(f->type) && !packed) {
                snprintf(why, size, "field %u (%s) of %s: wire type %u (%s) where %s takes %s", id, f->name, d->name,
                         wire, wire_name(wire), type_name(f->type), wire_name(wire_of(f->type)));
                return -1;
            }
        }
        uint64_t skip;
        switch (wire) {
        case 0:
            if (!varint(&c, &skip)) {
                snprintf(why, size, "field %u of %s: a varint runs past the end", id, d->name);
                return -1;
            }
            continue;
        case 1: len = 8; break;
        case 5: len = 4; break;
        case 2:
            if (!varint(&c, &len)) {
                snprintf(why, size, "field %u of %s: a bad length", id, d->name);
                return -1;
            }
            break;
        default:
            snprintf(why, size, "field %u of %s: wire type %u (%s), which protobuf no longer allows", id, d->name,
                     wire, wire_name(wire));
            return -1;
        }
        if (len > (uint64_t)(c.end - c.p)) {
            snprintf(why, size, "field %u of %s: %llu bytes announced, %zu left", id, d->name,
                     (unsigned long long)len, (size_t)(c.end - c.p));
            return -1;
        }
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
            check(f->descriptor, (cursor){c.p, c.p + len}, depth + 1, max_depth, why, size))
            return -1;
        c.p += len;
    }
    return 0;
}

int tw__pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t n, int max_depth, char *why,
                 size_t size)
{
    if (n == 0)
        return 0; /* data may be NULL then (an empty bytes field) */
    return check(d, (cursor){data, data + n}, 0, max_depth, why, size);
}

/* The 1,002-layer model of the frame-time cases (nasnet_size.h). */
#include "nasnet_size.h"

#define NASNET_CELLS 125

/* A NASNet-size Functional model: a stem and NASNET_CELLS cells of 8 layers,
 * each reading the two cells before it through two branches that meet in
 * Adds and a Concatenate (1,002 layers), on 8x8x4 tensors so that the work
 * is the graph's, not the convolutions'. */
char *nasnet_size_json(void)
{
    GString *s = g_string_new("{\"class_name\": \"Functional\", \"config\": {\"name\": \"nasnet_size\", \"layers\": ["
                              "{\"class_name\": \"InputLayer\", \"name\": \"image\", \"inbound_nodes\": [], "
                              "\"config\": {\"batch_input_shape\": [null, 8, 8, 4], \"name\": \"image\"}}");
#define LAYER(cls, name, extra, inbound)                                                                            \
    g_string_append_printf(s, ", {\"class_name\": \"%s\", \"name\": \"%s\", \"config\": {\"name\": \"%s\"%s}, "    \
                              "\"inbound_nodes\": [[%s]]}",                                                        \
                           cls, name, name, extra, inbound)
    char prev[32] = "stem", prev2[32] = "image";
    LAYER("Conv2D", "stem", ", \"filters\": 4, \"kernel_size\": [1, 1]", "[\"image\", 0, 0, {}]");
    for (int c = 0; c < NASNET_CELLS; c++) {
        char n[8][32], in[160];
        const char *parts[] = {"sep", "skip", "add1", "pool", "relu", "add2", "concat", "out"};
        for (int k = 0; k < 8; k++)
            g_snprintf(n[k], sizeof n[k], "cell%d_%s", c, parts[k]);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}]", prev);
        LAYER("Conv2D", n[0], ", \"filters\": 4, \"kernel_size\": [3, 3], \"padding\": \"same\"", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}]", prev2);
        LAYER("Conv2D", n[1], ", \"filters\": 4, \"kernel_size\": [1, 1]", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}], [\"%s\", 0, 0, {}]", n[0], n[1]);
        LAYER("Add", n[2], "", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}]", prev);
        LAYER("MaxPooling2D", n[3], ", \"pool_size\": [3, 3], \"strides\": [1, 1], \"padding\": \"same\"", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}]", prev2);
        LAYER("Activation", n[4], ", \"activation\": \"relu\"", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}], [\"%s\", 0, 0, {}]", n[3], n[4]);
        LAYER("Add", n[5], "", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}], [\"%s\", 0, 0, {}]", n[2], n[5]);
        LAYER("Concatenate", n[6], "", in);
        g_snprintf(in, sizeof in, "[\"%s\", 0, 0, {}]", n[6]);
        LAYER("Conv2D", n[7], ", \"filters\": 4, \"kernel_size\": [1, 1]", in);
        g_strlcpy(prev2, prev, sizeof prev2);
        g_strlcpy(prev, n[7], sizeof prev);
    }
#undef LAYER
    g_string_append_printf(s, "], \"input_layers\": [[\"image\", 0, 0]], \"output_layers\": [[\"%s\", 0, 0]]}}", prev);
    return g_string_free(s, FALSE);
}


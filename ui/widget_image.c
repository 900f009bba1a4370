#include "widget_image.h"

GdkTexture *tw_texture_of_surface(cairo_surface_t *surface)
{
    cairo_surface_flush(surface);
    int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
    int stride = cairo_image_surface_get_stride(surface);
    GBytes *bytes = g_bytes_new_with_free_func(cairo_image_surface_get_data(surface), (gsize)stride * (gsize)height,
                                               (GDestroyNotify)cairo_surface_destroy, cairo_surface_reference(surface));
    GdkTexture *texture = gdk_memory_texture_new(width, height, GDK_MEMORY_DEFAULT, bytes, (gsize)stride);
    g_bytes_unref(bytes);
    return texture;
}

gboolean tw_widget_cairo_rendered(GtkWidget *widget)
{
    GtkNative *native = gtk_widget_get_native(widget);
    GskRenderer *renderer = native ? gtk_native_get_renderer(native) : NULL;
    return renderer && GSK_IS_CAIRO_RENDERER(renderer);
}

void tw_image_job_run(tw_image_job *job)
{
    gint64 start = g_get_monotonic_time();
    /* ARGB32, as the GL path's texture (GDK_MEMORY_DEFAULT) reads it; opaque
     * all the same where the drawing fills the background. */
    job->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, job->width * job->scale, job->height * job->scale);
    cairo_surface_set_device_scale(job->surface, job->scale, job->scale);
    cairo_t *cr = cairo_create(job->surface);
    job->draw(job, cr);
    cairo_destroy(cr);
    job->ms = (double)(g_get_monotonic_time() - start) / 1000.0;
}

void tw_image_job_free(tw_image_job *job)
{
    if (job->finalize)
        job->finalize(job);
    if (job->surface)
        cairo_surface_destroy(job->surface);
    g_free(job);
}

typedef struct {
    GCancellable **rendering;
    tw_image_job_done done;
} job_return;

static void run_in_thread(GTask *task, gpointer source, gpointer job, GCancellable *cancellable)
{
    tw_image_job_run(job);
    g_task_return_pointer(task, job, (GDestroyNotify)tw_image_job_free);
}

static void job_returned(GObject *source, GAsyncResult *result, gpointer data)
{
    job_return *ret = data;
    /* NULL when cancelled: the widget was disposed (GTask freed the job).
     * The task kept the widget alive until now. */
    tw_image_job *job = g_task_propagate_pointer(G_TASK(result), NULL);
    if (job) {
        g_clear_object(ret->rendering);
        ret->done(GTK_WIDGET(source), job);
        gtk_widget_queue_draw(GTK_WIDGET(source)); /* and a newer job if the widget moved on */
    }
    g_free(ret);
}

void tw_image_job_start(GtkWidget *widget, GCancellable **rendering, tw_image_job *job, tw_image_job_done done)
{
    g_return_if_fail(*rendering == NULL);
    *rendering = g_cancellable_new();
    job_return *ret = g_new(job_return, 1);
    *ret = (job_return){rendering, done};
    GTask *task = g_task_new(widget, *rendering, job_returned, ret);
    g_task_set_task_data(task, job, NULL);
    g_task_run_in_thread(task, run_in_thread);
    g_object_unref(task);
}

/* ---- a kept image as a source ------------------------------------------------------ */

/* A raster source over the image: each copy of the pattern (a recording
 * surface keeps one) holds a reference, and no snapshot is taken. */
static void kept_copy_finish(cairo_pattern_t *pattern, void *data)
{
    cairo_surface_destroy(data);
}

static cairo_status_t kept_copy(cairo_pattern_t *pattern, void *data, const cairo_pattern_t *other)
{
    cairo_surface_reference(data);
    return CAIRO_STATUS_SUCCESS;
}

static cairo_surface_t *kept_acquire(cairo_pattern_t *pattern, void *data, cairo_surface_t *target,
                                     const cairo_rectangle_int_t *extents)
{
    return cairo_surface_reference(data);
}

static void kept_release(cairo_pattern_t *pattern, void *data, cairo_surface_t *surface)
{
    cairo_surface_destroy(surface);
}

void tw_cairo_set_source_kept(cairo_t *cr, cairo_surface_t *image, double x, double y)
{
    double sx, sy;
    cairo_surface_get_device_scale(image, &sx, &sy);
    int width = cairo_image_surface_get_width(image), height = cairo_image_surface_get_height(image);
    cairo_pattern_t *pattern = cairo_pattern_create_raster_source(cairo_surface_reference(image),
                                                                  cairo_surface_get_content(image), width, height);
    cairo_raster_source_pattern_set_acquire(pattern, kept_acquire, kept_release);
    cairo_raster_source_pattern_set_copy(pattern, kept_copy);
    cairo_raster_source_pattern_set_finish(pattern, kept_copy_finish);
    /* Pattern space is the image's pixels: user (x, y) is pixel (0, 0). */
    cairo_matrix_t m;
    cairo_matrix_init_scale(&m, sx, sy);
    cairo_matrix_translate(&m, -x, -y);
    cairo_pattern_set_matrix(pattern, &m);
    cairo_set_source(cr, pattern);
    cairo_pattern_destroy(pattern);
}

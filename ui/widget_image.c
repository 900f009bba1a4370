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

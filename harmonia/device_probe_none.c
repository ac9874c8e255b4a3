/* device_probe_none.c — the GPU probe of a build without CUDA: there is never a device. */
#include "harmonia/tree_internal.h"

harmonia_status harmonia_device_probe(harmonia_device_info *info)
{
    (void)info;
    return hm_fail(NULL, HARMONIA_ERR_NO_DEVICE, "built without CUDA (nvcc was not found or -Dcuda=disabled)");
}

// Eclipse Cyclone DDS (Debian: cyclonedds-dev, libddsc), the C API and the ddsi sertype/serdata
// interfaces the CDDS target implements for raw CDR samples.
#include <dds/dds.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsi/ddsi_serdata.h>

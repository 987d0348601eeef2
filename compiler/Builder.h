// Everything a model author needs from C++, in one include: the builder and
// its layers, the model zoo, loading and saving graphs, the AMP and training
// pipelines, the precision report and lowering to a plan. Installed as
// <ampc/Builder.h>; link `ampc::builder` (docs/builder.md).
#ifndef AMPC_COMPILER_BUILDER_H
#define AMPC_COMPILER_BUILDER_H

#include "compiler/GraphBuilder.h"
#include "compiler/GraphDot.h"
#include "compiler/GraphIO.h"
#include "compiler/Layers.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/PrecisionReport.h"
#include "models/Models.h"
#include "runtime/core/Version.h"

#endif

//! sloth's scalar functions as DataFusion user-defined functions: the
//! function's own signature types the call (with the constant arguments it
//! needs), its own casts prepare the arguments, and its columnar kernel
//! computes the result.

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::ScalarValue as DfScalar;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue as DfValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl,
    Signature, Volatility,
};

use crate::error::SlothError;
use crate::expr::ScalarFunc;
use crate::expr::function::{ArgType, ColumnarValue};

/// One sloth function, callable from a DataFusion plan.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct SlothFunction {
    func: ScalarFunc,
    name: String,
    signature: Signature,
}

/// `func` as a DataFusion function, named `sloth_<name>` so that it never
/// shadows one of DataFusion's.
pub(super) fn udf(func: ScalarFunc) -> ScalarUDF {
    ScalarUDF::new_from_impl(SlothFunction {
        name: format!("sloth_{}", func.name()),
        func,
        signature: Signature::variadic_any(Volatility::Immutable),
    })
}

fn to_df(e: SlothError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

impl SlothFunction {
    /// sloth's signature for arguments of `fields` (constants where known).
    fn sloth_signature(
        &self,
        fields: &[FieldRef],
        constants: &[Option<ArrayRef>],
    ) -> DfResult<crate::expr::function::Signature> {
        let types: Vec<DataType> = fields.iter().map(|f| f.data_type().clone()).collect();
        let args: Vec<ArgType> = types
            .iter()
            .zip(constants)
            .map(|(data_type, constant)| ArgType {
                data_type,
                constant: constant.as_ref(),
            })
            .collect();
        self.func.function().signature(&args).map_err(to_df)
    }
}

impl ScalarUDFImpl for SlothFunction {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, arg_types: &[DataType]) -> DfResult<DataType> {
        let fields: Vec<FieldRef> = arg_types
            .iter()
            .map(|t| Arc::new(Field::new("", t.clone(), true)))
            .collect();
        let none = vec![None; fields.len()];
        Ok(self.sloth_signature(&fields, &none)?.output)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let constants = args
            .scalar_arguments
            .iter()
            .map(|s| s.map(DfScalar::to_array).transpose())
            .collect::<DfResult<Vec<_>>>()?;
        let output = self.sloth_signature(args.arg_fields, &constants)?.output;
        Ok(Arc::new(Field::new(self.name(), output, true)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<DfValue> {
        let constants: Vec<Option<ArrayRef>> = args
            .args
            .iter()
            .map(|a| match a {
                DfValue::Scalar(s) => s.to_array().map(Some),
                DfValue::Array(_) => Ok(None),
            })
            .collect::<DfResult<_>>()?;
        let signature = self.sloth_signature(&args.arg_fields, &constants)?;
        let values = args
            .args
            .iter()
            .zip(&signature.casts)
            .map(|(a, cast)| {
                let (array, scalar) = match a {
                    DfValue::Array(array) => (array.clone(), false),
                    DfValue::Scalar(s) => (s.to_array()?, true),
                };
                let array = match cast {
                    Some(t) => arrow::compute::cast(&array, t)?,
                    None => array,
                };
                Ok(ColumnarValue::wrap(array, scalar))
            })
            .collect::<DfResult<Vec<_>>>()?;
        let out = self
            .func
            .function()
            .invoke(&values, &signature.output, args.number_rows)
            .map_err(to_df)?;
        Ok(match out {
            ColumnarValue::Array(a) => DfValue::Array(a),
            ColumnarValue::Scalar(a) => DfValue::Scalar(DfScalar::try_from_array(&a, 0)?),
        })
    }
}
